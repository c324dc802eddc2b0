import { describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/booking-settlement';
import * as keys from '#data/keys';
import { call, subscribedSession } from '../helpers/api';
import { tenant } from '#data/tenant';
import { newTestUserId, runSkill } from '../helpers/skill-call';

const BOOKING = { guarantee: 1500, backend: 70, deposit: 500 };

describe('booking-settlement', () => {
  it('simulates the settlement exactly (worked by hand) and stores nothing', async () => {
    const userId = newTestUserId();
    // No net revenue: the guarantee is paid; 1500 − 500 deposit = 1000 due; the promoter is 1500 down.
    const flat = await runSkill(skill, userId, { action: 'simulate_settlement', booking: BOOKING });
    expect(flat.status).toBe(200);
    expect(flat.body.settlement).toMatchObject({
      artistPayout: '1500.000000',
      backendEarnings: '0.000000',
      balanceDue: '1000.000000',
      promoterNet: '-1500.000000',
      dealPaid: 'guarantee',
    });
    // 70% of 3000.10 = 2100.07 > 1500: the backend wins; 2100.07 − 500 = 1600.07; 3000.10 − 2100.07 = 900.03.
    const won = await runSkill(skill, userId, { action: 'simulate_settlement', booking: { ...BOOKING, netRevenue: 3000.1 } });
    expect(won.body.settlement).toMatchObject({
      backendEarnings: '2100.070000',
      artistPayout: '2100.070000',
      balanceDue: '1600.070000',
      promoterNet: '900.030000',
      dealPaid: 'backend',
    });
    // 33.333333% of 0.03 = 0.0099999999 → 0.010000 (half up at the sixth decimal); 0.1 + 0.2 exactly 0.3.
    const tiny = await runSkill(skill, userId, {
      action: 'simulate_settlement',
      booking: { guarantee: 0.3, backend: 33.333333, deposit: 0.1, netRevenue: 0.03 },
    });
    expect(tiny.body.settlement).toMatchObject({ backendEarnings: '0.010000', artistPayout: '0.300000', balanceDue: '0.200000' });
    expect((await runSkill(skill, userId, { action: 'list' })).body).toMatchObject({ bookings: [], count: 0 });
  });

  it('refuses invalid bodies per action with the issues', async () => {
    const userId = newTestUserId();
    const bad: Record<string, unknown>[] = [
      { action: 'simulate_settlement', booking: { ...BOOKING, deposit: 2000 } },
      { action: 'simulate_settlement', booking: { ...BOOKING, backend: 101 } },
      { action: 'simulate_settlement', booking: { ...BOOKING, guarantee: 1.0000001 } },
      { action: 'create_escrow', bookingId: 'b1' },
      { action: 'release_funds' },
      { action: 'get', bookingId: 'has spaces' },
      { action: 'list', extra: 1 },
    ];
    for (const body of bad) {
      const res = await runSkill(skill, userId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
  });

  it('creates an escrow, releases it once with the settlement, and counts it in bookings and revenue', async () => {
    const userId = newTestUserId();
    const created = await runSkill(skill, userId, { action: 'create_escrow', bookingId: 'show-12-july', booking: BOOKING });
    expect(created.status).toBe(200);
    expect(created.body.booking).toMatchObject({ status: 'escrowed', escrow: { guarantee: '1500.000000', backend: '70.000000', deposit: '500.000000' } });
    expect((await runSkill(skill, userId, { action: 'create_escrow', bookingId: 'show-12-july', booking: BOOKING })).body.code).toBe('ESCROW_EXISTS');
    expect((await runSkill(skill, userId, { action: 'get', bookingId: 'nope' })).status).toBe(404);

    const released = await runSkill(
      skill,
      userId,
      { action: 'release_funds', bookingId: 'show-12-july', netRevenue: 4000 },
      { now: new Date('2026-07-13T01:00:00Z') },
    );
    expect(released.status).toBe(200);
    // 70% of 4000 = 2800 > 1500.
    expect(released.body.booking).toMatchObject({ status: 'released', settlement: { artistPayout: '2800.000000', balanceDue: '2300.000000' } });
    const again = await runSkill(skill, userId, { action: 'release_funds', bookingId: 'show-12-july' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ALREADY_RELEASED');
    const store = tenant(userId);
    expect(await store.get(keys.booking(userId, 'show-12-july'), true)).toMatchObject({ status: 'completed' });
    expect(await store.get(keys.revenueMonth(userId, '2026-07'), true)).toMatchObject({ amountCents: 280000 });
    // Another user cannot see or release it.
    const other = newTestUserId();
    expect((await runSkill(skill, other, { action: 'get', bookingId: 'show-12-july' })).status).toBe(404);
    expect((await runSkill(skill, other, { action: 'release_funds', bookingId: 'show-12-july' })).status).toBe(404);
  });

  it('20 concurrent releases: exactly one succeeds and the revenue is counted once', async () => {
    const userId = newTestUserId();
    await runSkill(skill, userId, { action: 'create_escrow', bookingId: 'race', booking: BOOKING });
    const now = new Date('2026-08-01T12:00:00Z');
    const results = await Promise.all(Array.from({ length: 20 }, () => runSkill(skill, userId, { action: 'release_funds', bookingId: 'race' }, { now })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.code === 'ALREADY_RELEASED')).toHaveLength(19);
    expect(await tenant(userId).get(keys.revenueMonth(userId, '2026-08'), true)).toMatchObject({ amountCents: 150000 });
  });

  it('answers GET with the read-only actions and refuses changes over GET', async () => {
    const session = await subscribedSession();
    const sim = await call('GET', '/api/skills/booking-settlement?action=simulate_settlement&guarantee=1500&backend=70&deposit=500', { session });
    expect(sim.status).toBe(200);
    expect(sim.body.settlement.balanceDue).toBe('1000.000000');
    expect((await call('GET', '/api/skills/booking-settlement', { session })).body).toMatchObject({ success: true, bookings: [], count: 0 });
    expect((await call('GET', '/api/skills/booking-settlement?action=release_funds&bookingId=x', { session })).status).toBe(400);
  });
});
