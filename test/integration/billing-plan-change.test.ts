import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { createAgent } from '#data/agents';
import { createUser } from '#data/users';
import { call, testSession, type TestSession } from '../helpers/api';
import { checkoutCompleted, deliverWebhook, startFakeStripe, subscriptionEvent, WEBHOOK_SECRET, type FakeStripe } from '../helpers/fake-stripe';

let stripe: FakeStripe;
let cardEnv: Record<string, string>;
const PRICES = { label: 'price_label_m', solo: 'price_solo_m', collective: 'price_collective_m', network: 'price_network_m' };

beforeAll(async () => {
  stripe = await startFakeStripe();
  cardEnv = { ...stripe.env, CARD_WEBHOOK_SECRET: WEBHOOK_SECRET, CARD_PRICES: JSON.stringify(PRICES) };
});
beforeEach(() => {
  reloadConfig(cardEnv);
});
afterAll(async () => {
  reloadConfig(Object.fromEntries(Object.keys(cardEnv).map((k) => [k, undefined])));
  await stripe.close();
});

/** An account subscribed to `plan` through a checkout the processor confirmed, and that subscription at the fake processor. */
async function subscriber(plan: keyof typeof PRICES) {
  const user = await createUser({ email: `${randomUUID()}@example.com` });
  const session = await testSession({ userId: user.userId, email: user.email });
  const subscription = `sub_${randomUUID().slice(0, 12)}`;
  const customer = `cus_${randomUUID().slice(0, 12)}`;
  stripe.addSubscription({ id: subscription, customer, price: PRICES[plan], userId: user.userId, plan });
  expect((await deliverWebhook(checkoutCompleted({ userId: user.userId, plan, subscription, customer }))).status).toBe(200);
  return { session, subscription, customer };
}

const changePlan = (session: TestSession, plan: string) => call('POST', '/api/billing', { session, body: { action: 'change-plan', plan } });
const planOf = async (session: TestSession) => (await call('GET', '/api/billing', { session })).body.plan;

/** The processor's webhook for the subscription as the fake holds it now. */
async function processorConfirms(subscription: string) {
  const sub = stripe.subscriptions.get(subscription)!;
  const res = await deliverWebhook(
    subscriptionEvent('customer.subscription.updated', {
      id: sub.id,
      status: sub.status,
      customer: sub.customer,
      price: sub.price,
      userId: sub.metadata.userId,
      plan: sub.metadata.plan,
    }),
  );
  expect(res.status).toBe(200);
}

describe('plan changes through the card processor', () => {
  it('upgrades: the subscription item moves to the new price with prorations; the plan changes when the webhook confirms', async () => {
    const { session, subscription } = await subscriber('solo');
    const res = await changePlan(session, 'collective');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, plan: 'collective', previousPlan: 'solo', subscriptionId: subscription, status: 'pending' });
    expect(stripe.subscriptions.get(subscription)!.changes).toEqual([{ price: PRICES.collective, proration: 'create_prorations' }]);
    expect(await planOf(session)).toBe('solo');
    await processorConfirms(subscription);
    expect(await planOf(session)).toBe('collective');
  });

  it('downgrades when the account fits the smaller plan', async () => {
    const { session, subscription } = await subscriber('collective');
    await createAgent(session.userId, { name: 'one', model: 'openai/gpt-4o-mini', config: {}, source: 'api' }, 10);
    expect((await changePlan(session, 'label')).status).toBe(200);
    expect(stripe.subscriptions.get(subscription)!.price).toBe(PRICES.label);
    await processorConfirms(subscription);
    expect(await planOf(session)).toBe('label');
  });

  it('refuses a downgrade below the agents the account holds with current, limit and what to remove; nothing reaches the processor', async () => {
    const { session, subscription } = await subscriber('collective');
    for (const name of ['a', 'b', 'c']) await createAgent(session.userId, { name, model: 'openai/gpt-4o-mini', config: {}, source: 'api' }, 10);
    const res = await changePlan(session, 'label');
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'PLAN_LIMIT_EXCEEDED', current: { agents: 3, skills: 0 }, limit: { agents: 1, skills: 3 } });
    expect(res.body.error).toContain('remove 2 agents');
    expect(stripe.subscriptions.get(subscription)!.changes).toEqual([]);
    expect(await planOf(session)).toBe('collective');
  });

  it('needs an active subscription and a different plan; a processor failure is 502', async () => {
    const nobody = await testSession();
    expect((await changePlan(nobody, 'solo')).body).toMatchObject({ code: 'SUBSCRIPTION_REQUIRED' });
    const { session } = await subscriber('solo');
    expect((await changePlan(session, 'solo')).body).toMatchObject({ code: 'SAME_PLAN' });
    stripe.failNext(500);
    expect((await changePlan(session, 'network')).status).toBe(502);
  });

  it("redirects to the processor's billing portal for the account's customer, returning to the billing page", async () => {
    const { session, customer } = await subscriber('solo');
    const res = await call('GET', '/api/card/portal', { session });
    expect(res.status).toBe(302);
    expect(res.headers.location).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\//);
    const sent = stripe.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/billing_portal/sessions', form: { customer } });
    expect(String(sent.form.return_url)).toMatch(/\/settings\/billing$/);
    expect((await call('POST', '/api/billing', { session, body: { action: 'billing-portal' } })).body.url).toMatch(/^https:\/\/billing\.stripe\.com\//);
    expect((await call('GET', '/api/card/portal', { session: await testSession() })).status).toBe(404);
  });
});
