import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjustCredits, creditEntryId, creditItems } from '#domain/billing/credits';
import { accountAccess, requireActiveSubscription, requirePlan } from '#domain/billing/entitlements';
import { PLANS } from '#domain/billing/plans';
import { reloadConfig } from '#platform/config';
import { decrypt, EnvelopeError } from '#platform/crypto/envelope';
import * as keys from '#data/keys';
import { tenant, transact } from '#data/tenant';
import { createUser } from '#data/users';
import { DomainError } from '#platform/errors';
import { httpErrorOf } from '#http/domain-errors';
import { byokContext } from '#domain/ai/byok';
import { call, testSession, type TestSession } from '../helpers/api';
import { checkoutCompleted, deliverWebhook, subscriptionEvent, WEBHOOK_SECRET } from '../helpers/fake-stripe';

const CARD_ENV = { CARD_WEBHOOK_SECRET: WEBHOOK_SECRET, CARD_CREDIT_PRICES: JSON.stringify({ price_credits_1000: 1000 }) };

beforeAll(() => {
  reloadConfig(CARD_ENV);
});
afterAll(() => {
  reloadConfig({ CARD_WEBHOOK_SECRET: undefined, CARD_CREDIT_PRICES: undefined });
});

async function account(): Promise<TestSession> {
  const user = await createUser({ email: `${randomUUID()}@example.com` });
  return testSession({ userId: user.userId, email: user.email });
}

describe('GET /api/billing', () => {
  it('shows an account that never subscribed as plan none, status none, inactive, with no plan limits', async () => {
    const session = await account();
    const res = await call('GET', '/api/billing', { session });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      plan: 'none',
      status: 'none',
      active: false,
      currentPeriodEnd: null,
      cancelAtPeriodEnd: false,
      credits: 0,
      extraStorageGb: 0,
      byok: { enabled: false, providers: [] },
      limits: { agents: 0, skills: 0, a2aPerDay: 0, memory: '0 GB', models: [] },
      creditPacks: [{ price: 'price_credits_1000', credits: 1000 }],
      plans: [
        { plan: 'label', price: { amount: 29, currency: 'USD', interval: 'month' }, agents: 1, skills: 3 },
        { plan: 'solo', price: { amount: 79, currency: 'USD', interval: 'month' }, agents: 3, skills: 10 },
        { plan: 'collective', price: { amount: 199, currency: 'USD', interval: 'month' }, agents: 10, skills: 25 },
        { plan: 'network', price: { amount: 499, currency: 'USD', interval: 'month' }, agents: 100, skills: 100 },
      ],
    });
  });

  it("shows the plan table's row of an active plan", async () => {
    const session = await account();
    await deliverWebhook(
      subscriptionEvent('customer.subscription.updated', { id: `sub_${randomUUID()}`, status: 'trialing', userId: session.userId, plan: 'collective' }),
    );
    const res = await call('GET', '/api/billing', { session });
    expect(res.body).toMatchObject({
      plan: 'collective',
      status: 'trialing',
      active: true,
      limits: { agents: 10, skills: 25, a2aPerDay: 2000, memory: '4 GB', models: [...PLANS.collective.models] },
    });
    expect(res.body.currentPeriodEnd).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('admins are active with network limits without a subscription', async () => {
    const res = await call('GET', '/api/billing', { session: await testSession({ admin: true }) });
    expect(res.body).toMatchObject({ active: true, limits: { agents: PLANS.network.agents, models: [...PLANS.network.models] } });
  });
});

describe('subscription checks come from the stored account only', () => {
  it('without a subscription: 402 SUBSCRIPTION_REQUIRED / PLAN_REQUIRED, whatever headers say', async () => {
    const session = await account();
    const auth = { userId: session.userId, email: session.email, isAdmin: false, isTester: false, via: 'cookie' as const };
    const access = await accountAccess(auth as never);
    expect(access.subscriptionActive).toBe(false);
    expect(() => requireActiveSubscription(access)).toThrow(expect.objectContaining({ kind: 'paymentRequired', code: 'SUBSCRIPTION_REQUIRED' }));
    expect(() => requirePlan(access)).toThrow(expect.objectContaining({ kind: 'paymentRequired', code: 'PLAN_REQUIRED' }));
  });

  it('the retired free plan is 402 PLAN_REQUIRED even when stored as active', async () => {
    const session = await account();
    await tenant(session.userId).put({
      ...keys.subscription(session.userId),
      status: 'active',
      plan: 'free',
      eventCreated: 1,
      updatedAt: new Date().toISOString(),
    });
    const access = await accountAccess({ userId: session.userId, isAdmin: false, isTester: false } as never);
    expect(access.subscriptionActive).toBe(false);
    let caught: unknown;
    try {
      requireActiveSubscription(access, { success: false });
    } catch (err) {
      caught = err;
    }
    // A domain failure below HTTP; the pipeline's one mapping turns it into the 402 the spec names.
    expect(caught).toBeInstanceOf(DomainError);
    expect(caught).toMatchObject({ kind: 'paymentRequired', code: 'PLAN_REQUIRED', details: { success: false } });
    expect(httpErrorOf(caught)).toMatchObject({ status: 402, code: 'PLAN_REQUIRED', extra: { success: false } });
  });

  it('past_due and canceled subscriptions are not active; active and trialing are', async () => {
    for (const [status, active] of [
      ['active', true],
      ['trialing', true],
      ['past_due', false],
      ['canceled', false],
      ['incomplete', false],
    ] as const) {
      const session = await account();
      await deliverWebhook(subscriptionEvent('customer.subscription.updated', { id: `sub_${randomUUID()}`, status, userId: session.userId, plan: 'solo' }));
      const access = await accountAccess({ userId: session.userId, isAdmin: false, isTester: false } as never);
      expect({ status, active: access.subscriptionActive }).toEqual({ status, active });
    }
  });
});

describe('bring your own key', () => {
  it('stores the key envelope-encrypted for this user only, shows only its last four characters, and removes it', async () => {
    const session = await account();
    const apiKey = `sk-or-v1-${randomUUID().replaceAll('-', '')}Q9xa`;
    const res = await call('POST', '/api/billing', { session, body: { action: 'enable-byok', provider: 'openrouter', apiKey } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      byok: { enabled: true, providers: [{ provider: 'openrouter', keyPreview: '…Q9xa', updatedAt: expect.any(String) }] },
    });
    expect(res.text).not.toContain(apiKey);

    const item = await tenant(session.userId).get<Record<string, unknown>>(keys.byok(session.userId, 'openrouter'));
    expect(JSON.stringify(item)).not.toContain(apiKey);
    const opened = await decrypt(item!.key as never, byokContext(session.userId, 'openrouter'));
    expect(opened.toString('utf8')).toBe(apiKey);
    await expect(decrypt(item!.key as never, byokContext('u_someone_else', 'openrouter'))).rejects.toBeInstanceOf(EnvelopeError);

    const overview = await call('GET', '/api/billing', { session });
    expect(overview.body.byok.providers.map((p: { provider: string }) => p.provider)).toEqual(['openrouter']);
    expect(overview.text).not.toContain(apiKey);

    const off = await call('POST', '/api/billing', { session, body: { action: 'disable-byok', provider: 'openrouter' } });
    expect(off.body).toEqual({ success: true, byok: { enabled: false, providers: [] } });
    const again = await call('POST', '/api/billing', { session, body: { action: 'disable-byok', provider: 'openrouter' } });
    expect(again.status).toBe(404);
  });

  it('a new key for a provider replaces the old one', async () => {
    const session = await account();
    await call('POST', '/api/billing', { session, body: { action: 'enable-byok', provider: 'openai', apiKey: 'sk-first-key-aaaa' } });
    const res = await call('POST', '/api/billing', { session, body: { action: 'enable-byok', provider: 'openai', apiKey: 'sk-second-key-bbbb' } });
    expect(res.body.byok.providers).toEqual([expect.objectContaining({ provider: 'openai', keyPreview: '…bbbb' })]);
  });

  it('refuses a provider the platform does not support with 400', async () => {
    const res = await call('POST', '/api/billing', { session: await account(), body: { action: 'enable-byok', provider: 'acme-ai', apiKey: 'k-0123456789' } });
    expect(res.status).toBe(400);
  });
});

describe('credits: GET /api/credits and get-usage', () => {
  it('shows the balance and the ledger newest first, page by page', async () => {
    const session = await account();
    const t = Date.now();
    await adjustCredits(session.userId, 100, 'purchase', creditEntryId(t - 3000));
    await adjustCredits(session.userId, 25, 'referral', creditEntryId(t - 2000));
    await adjustCredits(session.userId, -7, 'usage', creditEntryId(t - 1000));

    const first = await call('GET', '/api/credits?limit=2', { session });
    expect(first.status).toBe(200);
    expect(first.body.balance).toBe(118);
    expect(first.body.currency).toBe('credits');
    expect(first.body.ledger.map((e: { delta: number }) => e.delta)).toEqual([-7, 25]);
    expect(first.body.cursor).toEqual(expect.any(String));

    const second = await call('GET', `/api/credits?limit=2&cursor=${encodeURIComponent(first.body.cursor)}`, { session });
    expect(second.body.ledger.map((e: { delta: number; reason: string }) => [e.delta, e.reason])).toEqual([[100, 'purchase']]);
  });

  it("refuses another account's cursor with 400", async () => {
    const owner = await account();
    for (let i = 0; i < 3; i++) await adjustCredits(owner.userId, 1, 'adjustment');
    const page = await call('GET', '/api/credits?limit=1', { session: owner });
    const res = await call('GET', `/api/credits?limit=1&cursor=${encodeURIComponent(page.body.cursor)}`, { session: await account() });
    expect(res.status).toBe(400);
  });

  it('get-usage sums the usage entries of the billing period from the ledger', async () => {
    const session = await account();
    const periodStart = Math.floor(Date.now() / 1000) - 3600;
    await deliverWebhook(
      subscriptionEvent('customer.subscription.updated', {
        id: `sub_${randomUUID()}`,
        status: 'active',
        userId: session.userId,
        plan: 'label',
        periodStart,
        periodEnd: periodStart + 30 * 86400,
      }),
    );
    // Before the period: not counted.
    const before = (s: number) => new Date((periodStart - s) * 1000);
    await transact(creditItems(session.userId, 50, 'purchase', creditEntryId(before(60).getTime()), undefined, before(60)));
    await transact(creditItems(session.userId, -5, 'usage', creditEntryId(before(30).getTime()), undefined, before(30)));
    // In the period.
    await adjustCredits(session.userId, 20, 'referral');
    await adjustCredits(session.userId, -3, 'usage');
    await adjustCredits(session.userId, -4, 'usage');

    const res = await call('POST', '/api/billing', { session, body: { action: 'get-usage' } });
    expect(res.status).toBe(200);
    expect(res.body.usage).toMatchObject({
      periodStart: new Date(periodStart * 1000).toISOString(),
      credits: { balance: 58, spent: 7, added: 20, usageEntries: 2 },
      limits: { agents: 1, skills: 3, a2aPerDay: 100, memory: '8 GB' },
    });
  });

  it('a credit purchase through the webhook shows in GET /api/credits', async () => {
    const session = await account();
    await deliverWebhook(
      checkoutCompleted({
        userId: session.userId,
        mode: 'payment',
        metadata: { userId: session.userId, kind: 'credits', credits: '1000', price: 'price_credits_1000' },
      }),
    );
    const res = await call('GET', '/api/credits', { session });
    expect(res.body.balance).toBe(1000);
    expect(res.body.ledger).toEqual([expect.objectContaining({ delta: 1000, reason: 'purchase' })]);
  });
});
