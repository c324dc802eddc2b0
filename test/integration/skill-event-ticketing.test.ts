import { describe, expect, it } from 'vitest';
import { readOutbox } from '#adapters/email';
import { callSkill, expectRefused, skillOk, skillUser } from './skills-helpers';

const EVENT = {
  action: 'create_event',
  name: 'Summer Warehouse',
  date: '2026-07-18',
  venue: 'Depot',
  tiers: [
    { tier: 'general', priceCents: 2500, quantity: 12 },
    { tier: 'vip', priceCents: 6000, quantity: 2 },
  ],
};

describe('event-ticketing skill', () => {
  it('sells a purchase against the tier inventory, stores the order and emails a confirmation', async () => {
    const user = await skillUser();
    const { event } = await skillOk(user, 'event-ticketing', EVENT);
    expect(event.tiers.general).toEqual({ priceCents: 2500, quantity: 12, remaining: 12 });
    const email = `buyer-${user.userId}@example.com`;
    const { order, confirmationSent } = await skillOk(user, 'event-ticketing', { action: 'purchase', eventId: event.eventId, email, tier: 'vip', quantity: 2 });
    expect(order).toMatchObject({ eventId: event.eventId, tier: 'vip', quantity: 2, amountCents: 12000, currency: 'USD', status: 'confirmed' });
    expect(confirmationSent).toBe(true);
    const mail = await readOutbox(email);
    expect(mail).toHaveLength(1);
    expect(mail[0]!.text).toContain(order.orderId);
    expect(mail[0]!.text).toContain('120.00 USD');

    const soldOut = await callSkill(user, 'event-ticketing', { action: 'purchase', eventId: event.eventId, email, tier: 'vip' });
    expect(soldOut.status).toBe(409);
    expect(soldOut.body).toMatchObject({ code: 'SOLD_OUT', remaining: 0 });
    expect((await callSkill(user, 'event-ticketing', { action: 'purchase', eventId: event.eventId, email, tier: 'balcony' })).status).toBe(404);
    expect((await callSkill(user, 'event-ticketing', { action: 'purchase', eventId: 'evt_missing', email, tier: 'vip' })).status).toBe(404);
  });

  it('50 concurrent purchases of the last 10 tickets sell exactly 10', async () => {
    const user = await skillUser();
    const { event } = await skillOk(user, 'event-ticketing', EVENT);
    await skillOk(user, 'event-ticketing', { action: 'purchase', eventId: event.eventId, email: 'first@example.com', tier: 'general', quantity: 2 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        callSkill(user, 'event-ticketing', { action: 'purchase', eventId: event.eventId, email: `fan${i}@example.com`, tier: 'general' }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 409)).toHaveLength(40);
    const listed = await skillOk(user, 'event-ticketing', { action: 'list_orders', eventId: event.eventId });
    expect(listed).toMatchObject({ count: 11, ticketsSold: 12 });
    const { events } = await skillOk(user, 'event-ticketing', { action: 'list_events' });
    expect(events[0].tiers.general.remaining).toBe(0);
  });

  it('keeps events and orders inside the account', async () => {
    const owner = await skillUser();
    const other = await skillUser();
    const { event } = await skillOk(owner, 'event-ticketing', EVENT);
    expect((await callSkill(other, 'event-ticketing', { action: 'purchase', eventId: event.eventId, email: 'x@example.com', tier: 'general' })).status).toBe(
      404,
    );
    expect(await skillOk(other, 'event-ticketing', { action: 'list_events' })).toEqual({ success: true, events: [], count: 0 });
    expect(await skillOk(other, 'event-ticketing', { action: 'list_orders' })).toEqual({ success: true, orders: [], count: 0, ticketsSold: 0 });
  });

  it('refuses invalid bodies for each action', async () => {
    const user = await skillUser();
    await expectRefused(user, 'event-ticketing', [
      { ...EVENT, tiers: [] },
      { ...EVENT, tiers: [EVENT.tiers[0], EVENT.tiers[0]] },
      { ...EVENT, date: '18/07/2026' },
      { action: 'list_events', page: 2 },
      { action: 'purchase', eventId: 'evt_1', email: 'not-an-email', tier: 'general' },
      { action: 'purchase', eventId: 'evt_1', email: 'a@example.com', tier: 'general', quantity: 11 },
      { action: 'list_orders', eventId: '../x' },
    ]);
  });
});
