import { describe, expect, it } from 'vitest';
import { call, testSession } from '../helpers/api';
import { callSkill, expectRefused, skillOk, skillUser } from './skills-helpers';

const VENUES = [
  { id: 'albert-hall', name: 'Albert Hall', city: 'Manchester', country: 'GB', type: 'club', capacity: 1800, price: 1500 },
  { id: 'soup-kitchen', name: 'Soup Kitchen', city: 'Manchester', country: 'GB', type: 'club', capacity: 400, price: 600 },
  { id: 'band-on-wall', name: 'Band on the Wall', city: 'Manchester', country: 'GB', type: 'bar', capacity: 500, price: 900 },
  { id: 'fabric', name: 'Fabric', city: 'London', country: 'GB', type: 'club', capacity: 1600, price: 4000 },
];
const FESTIVALS = [
  { id: 'ade', name: 'ADE', country: 'NL', city: 'Amsterdam', genres: ['electronic', 'techno'], startDate: '2026-10-14', ticketPrice: 120 },
  { id: 'dgtl', name: 'DGTL', country: 'NL', genres: ['techno'], startDate: '2026-04-04', ticketPrice: 95 },
  { id: 'sonar', name: 'Sonar', country: 'ES', genres: ['electronic'], startDate: '2026-06-18', ticketPrice: 260 },
];

// Both catalogues are global: this file alone writes them, in one test so the order is fixed.
describe('venue-finder and festival-finder skills', () => {
  it('search nothing before an import, only the operator imports, then search with the spec filters', async () => {
    const user = await skillUser();
    const admin = await testSession({ admin: true });
    await call('POST', '/api/skills/venue-finder/catalogue', { session: admin, body: { venues: [VENUES[0]], replace: true } });
    await call('POST', '/api/skills/venue-finder/catalogue', { session: admin, body: { venues: [VENUES[0]], replace: true } });

    expect((await call('POST', '/api/skills/venue-finder/catalogue', { session: user, body: { venues: VENUES } })).status).toBe(403);
    const imported = await call('POST', '/api/skills/venue-finder/catalogue', { session: admin, body: { venues: VENUES, replace: true } });
    expect(imported.body).toEqual({ success: true, imported: 4, removed: 0 });
    // Manchester clubs for 500+ people under 2000: only Albert Hall (Soup Kitchen holds 400, Band on the Wall is a bar).
    const found = await skillOk(user, 'venue-finder', { action: 'search', city: 'manchester', type: 'club', capacity: 500, maxPrice: 2000 });
    expect(found.venues.map((v: { id: string }) => v.id)).toEqual(['albert-hall']);
    expect((await skillOk(user, 'venue-finder', { action: 'search', city: 'Manchester' })).venues.map((v: { id: string }) => v.id)).toEqual([
      'soup-kitchen',
      'band-on-wall',
      'albert-hall',
    ]);
    expect((await skillOk(user, 'venue-finder', { action: 'search', city: 'Leeds' })).count).toBe(0);

    await call('POST', '/api/skills/festival-finder/catalogue', { session: admin, body: { festivals: FESTIVALS, replace: true } });
    const nl = await skillOk(user, 'festival-finder', { action: 'search', genre: 'techno', country: 'NL', maxPrice: 100 });
    expect(nl.festivals.map((f: { id: string }) => f.id)).toEqual(['dgtl']);
    expect((await skillOk(user, 'festival-finder', { action: 'search', genre: 'electronic' })).festivals.map((f: { id: string }) => f.id)).toEqual([
      'sonar',
      'ade',
    ]);

    const replaced = await call('POST', '/api/skills/festival-finder/catalogue', { session: admin, body: { festivals: [FESTIVALS[2]], replace: true } });
    expect(replaced.body).toEqual({ success: true, imported: 1, removed: 2 });
    expect((await skillOk(user, 'festival-finder', { action: 'search' })).count).toBe(1);
  });

  it('refuse invalid bodies and bad import files', async () => {
    const user = await skillUser();
    await expectRefused(user, 'venue-finder', [
      { action: 'search', capacity: -5 },
      { action: 'search', maxPrice: 'cheap' },
      { action: 'search', near: 'me' },
    ]);
    await expectRefused(user, 'festival-finder', [
      { action: 'search', maxPrice: -1 },
      { action: 'search', genre: '' },
    ]);
    const admin = await testSession({ admin: true });
    const bad = await call('POST', '/api/skills/venue-finder/catalogue', { session: admin, body: { venues: [{ ...VENUES[0], country: 'England' }] } });
    expect(bad.status).toBe(400);
    expect((await callSkill(user, 'venue-finder', { action: 'search' })).status).toBe(200);
  });
});
