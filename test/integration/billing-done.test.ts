import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountAccess } from '#domain/billing/entitlements';
import { reloadConfig } from '#platform/config';
import { createUser } from '#data/users';
import { call, testSession } from '../helpers/api';
import { checkoutCompleted, deliverWebhook, subscriptionEvent, WEBHOOK_SECRET } from '../helpers/fake-stripe';

/**
 * Billing end to end, through the real handlers: only signed card webhooks change the
 * account, and the billing routes show what they did.
 */
beforeAll(() => {
  reloadConfig({ CARD_WEBHOOK_SECRET: WEBHOOK_SECRET });
});
afterAll(() => {
  reloadConfig({ CARD_WEBHOOK_SECRET: undefined });
});

describe('done means: a signed checkout activates the plan, a deletion ends it', () => {
  it('checkout.session.completed → active with its plan (GET /api/billing, GET /api/credits, GET /api/settings); customer.subscription.deleted → inactive', async () => {
    const user = await createUser({ email: `${randomUUID()}@example.com` });
    const session = await testSession({ userId: user.userId, email: user.email });
    const auth = { userId: user.userId, email: user.email, isAdmin: false, isTester: false } as never;

    const before = await call('GET', '/api/billing', { session });
    expect(before.body).toMatchObject({ plan: 'none', status: 'none', active: false });
    expect((await accountAccess(auth)).subscriptionActive).toBe(false);

    const subscription = `sub_test_${randomUUID().slice(0, 12)}`;
    const t = Math.floor(Date.now() / 1000);
    const completed = await deliverWebhook(checkoutCompleted({ userId: user.userId, plan: 'solo', subscription }, { created: t - 10 }));
    expect(completed.status).toBe(200);

    const active = await call('GET', '/api/billing', { session });
    expect(active.body).toMatchObject({ plan: 'solo', status: 'active', active: true, limits: { agents: 3, skills: 10, a2aPerDay: 500, memory: '2 GB' } });
    const settings = await call('GET', '/api/settings', { session });
    expect(settings.body).toMatchObject({ id: user.userId, plan: 'solo' });
    const credits = await call('GET', '/api/credits', { session });
    expect(credits.status).toBe(200);
    expect(credits.body).toMatchObject({ balance: 0, currency: 'credits', ledger: [] });
    const access = await accountAccess(auth);
    expect(access).toMatchObject({ subscriptionActive: true, plan: 'solo', subscriptionId: subscription, agentLimit: 3 });

    const deleted = await deliverWebhook(
      subscriptionEvent('customer.subscription.deleted', { id: subscription, status: 'canceled', userId: user.userId, plan: 'solo' }, { created: t }),
    );
    expect(deleted.status).toBe(200);
    const after = await call('GET', '/api/billing', { session });
    expect(after.body).toMatchObject({ plan: 'solo', status: 'canceled', active: false });
    expect((await accountAccess(auth)).subscriptionActive).toBe(false);

    // A request can never claim a subscription: the plan and status come from storage only.
    const forged = await call('GET', '/api/billing', { session, headers: { 'x-user-plan': 'network', 'x-card-subscription-id': subscription } });
    expect(forged.body).toMatchObject({ plan: 'solo', active: false });
  });
});
