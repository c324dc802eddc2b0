import { describe, expect, it } from 'vitest';
import { skill as royaltyTracker } from '#functions/http/skills/skills/royalty-tracker';
import { skill as eventTicketing } from '#functions/http/skills/skills/event-ticketing';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { call, testSession } from '../helpers/api';
import { runSkill } from '../helpers/skill-call';

/** The summary fed by the skills' own records: ticket sales and royalty statements. */
describe('GET /api/metrics/:userId/summary from ticket sales and royalties', () => {
  it('counts ticket sales as bookings and their USD once in the revenue, beside royalties (hand-worked figures)', async () => {
    const user = await testSession();
    const now = new Date();
    const month = now.toISOString().slice(0, 7);
    const prevMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)).toISOString().slice(0, 7);

    const usd = await runSkill(eventTicketing, user.userId, {
      action: 'create_event',
      name: 'Warehouse night',
      date: '2030-06-01',
      tiers: [
        { tier: 'ga', priceCents: 2500, quantity: 5 },
        { tier: 'vip', priceCents: 8000, quantity: 2 },
      ],
    });
    const eur = await runSkill(eventTicketing, user.userId, {
      action: 'create_event',
      name: 'Berlin club night',
      date: '2030-07-01',
      currency: 'EUR',
      tiers: [{ tier: 'ga', priceCents: 1000, quantity: 3 }],
    });
    const buy = (eventId: string, tier: string, quantity: number) =>
      runSkill(eventTicketing, user.userId, { action: 'purchase', eventId, tier, quantity, email: 'fan@example.com' });
    expect((await buy(usd.body.event.eventId, 'ga', 2)).status).toBe(200); // 2 × $25.00 = $50.00
    expect((await buy(usd.body.event.eventId, 'vip', 1)).status).toBe(200); // $80.00
    expect((await buy(usd.body.event.eventId, 'vip', 5)).status).toBe(409); // only 1 VIP left: no sale, no revenue
    expect((await buy(eur.body.event.eventId, 'ga', 1)).status).toBe(200); // a booking; EUR is not added to USD revenue

    const royalties = await runSkill(royaltyTracker, user.userId, {
      action: 'import_statements',
      statements: [
        { period: month, source: 'Spotify', amount: '20.5' },
        { period: prevMonth, source: 'Bandcamp', amount: '100' },
      ],
    });
    expect(royalties.status).toBe(200);
    await tenant(user.userId).put({ ...keys.booking(user.userId, 'b1'), status: 'pending' });

    const res = await call('GET', `/api/metrics/${user.userId}/summary`, { session: user });
    expect(res.status).toBe(200);
    // This month: $50.00 + $80.00 tickets + $20.50 royalties = $150.50; last month $100.00 royalties.
    // Change (150.50 - 100) / 100 = +50.5%. Bookings: 3 ticket orders completed, 1 pending → 75%.
    expect(res.body.revenue).toEqual({ month: '$150.50', total: '$250.50', change: '+50.5%' });
    expect(res.body.bookings).toEqual({ completed: 3, pending: 1, conversion: '75%' });

    // Reading again counts nothing twice.
    expect((await call('GET', `/api/metrics/${user.userId}/summary`, { session: user })).body.revenue.total).toBe('$250.50');
  });
});
