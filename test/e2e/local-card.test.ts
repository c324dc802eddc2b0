import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack, stopLocalStack, until } from '../helpers/local-stack';

/**
 * A newcomer's path with CARD_MODE=local, over real HTTP against `npm start` and without
 * ADMIN_EMAILS: sign up, get a 402 that says how to subscribe, check out on the local card page,
 * and provision an agent. The plan is granted by the signed webhook, through the same
 * verification as the real processor's.
 */
describe('npm start with CARD_MODE=local', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-card-e2e-'));
  let stack: LocalStack;
  let base: string;
  let token: string;
  let checkoutPage: string;

  const api = async (method: string, pathname: string, body?: unknown) => {
    const res = await fetch(`${base}${pathname}`, {
      method,
      redirect: 'manual',
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, location: res.headers.get('location'), body: text.startsWith('{') ? JSON.parse(text) : text };
  };

  beforeAll(async () => {
    stack = startLocalStack({ DATA_DIR: dataDir, CARD_MODE: 'local' });
    base = await stack.ready;
  }, 90_000);

  afterAll(() => stopLocalStack(stack, dataDir));

  it('GET /api (and GET / asked for JSON) points at the API description and says how to subscribe locally; GET / in a browser is the console', async () => {
    const index = await api('GET', '/api');
    expect(index.status).toBe(200);
    expect(index.body).toMatchObject({ openapi: '/api/openapi.json', cardMode: 'local' });
    expect(index.body.subscribe).toContain('/api/card/checkout');
    const asJson = await fetch(`${base}/`, { headers: { accept: 'application/json' } });
    expect(await asJson.json()).toEqual(index.body);
    const asPage = await fetch(`${base}/`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(asPage.headers.get('content-type')).toContain('text/html');
    expect(await asPage.text()).toContain('/assets/console-');
  });

  it('a new user gets a 402 that says how to subscribe', async () => {
    const credentials = { email: 'newcomer@example.com', password: 'correct-horse-battery' };
    expect((await api('POST', '/api/register', credentials)).status).toBeLessThan(300);
    const signIn = await fetch(`${base}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(credentials),
    });
    token = /(?:^|,\s*)session=([^;]+)/.exec(signIn.headers.getSetCookie().join(', '))![1]!;
    const refused = await api('POST', '/api/agents/provision', { name: 'first agent' });
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe('SUBSCRIPTION_REQUIRED');
    expect(refused.body.subscribe.checkout).toContain('/api/card/checkout?plan=');
    expect(refused.body.subscribe.note).toContain('local card mode');
  });

  it('checkout redirects to the local card page, and paying there activates the plan through the signed webhook', async () => {
    const checkout = await api('GET', '/api/card/checkout?plan=solo');
    expect([302, 303]).toContain(checkout.status);
    checkoutPage = checkout.location!;
    expect(checkoutPage).toMatch(new RegExp(`^${base}/local-card/checkout/cs_local_[0-9a-f]+$`));
    const page = await fetch(checkoutPage);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('solo plan');
    // A page whose button pays is never framed by another site.
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');

    const paid = await fetch(checkoutPage, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toMatch(/\/settings\/billing\?checkout=success&session_id=cs_local_/);
    // The console's billing page (test/e2e/console.test.ts follows the same return in a browser).
    const returned = await fetch(paid.headers.get('location')!);
    expect(returned.status).toBe(200);
    expect(returned.headers.get('content-type')).toContain('text/html');

    const billing = await api('GET', '/api/billing');
    expect(billing.status).toBe(200);
    expect(JSON.stringify(billing.body)).toContain('solo');
    // The session is single use: paying twice grants nothing more.
    expect((await fetch(checkoutPage, { method: 'POST', redirect: 'manual' })).status).toBe(404);
  });

  it('the webhook still refuses an unsigned or wrongly signed event', async () => {
    const forged = JSON.stringify({ id: 'evt_forged', type: 'checkout.session.completed', created: 1, data: { object: {} } });
    const res = await fetch(`${base}/api/webhooks/card`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: forged,
    });
    expect(res.status).toBe(400);
  });

  it('serves the console page the password-reset email links to, and says when an instance path id is not a user id', async () => {
    const page = await fetch(`${base}/reset-password?token=tok_from_the_email`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('/assets/console-');
    const notAnId = await api('GET', '/api/instance/me/token');
    expect(notAnId.status).toBe(403);
    expect(notAnId.body.error).toContain('"me" is not a user id');
  });

  it('with the plan active, the new user provisions an agent (no ADMIN_EMAILS)', async () => {
    const provisioned = await api('POST', '/api/agents/provision', { name: 'first agent' });
    expect(provisioned.status).toBe(201);
    expect(provisioned.body.agent.status).toBe('provisioning');
  });

  it("the plan renews a calendar month after payment, as the processor's subscription event says", async () => {
    const billing = await api('GET', '/api/billing');
    expect(billing.body).toMatchObject({ plan: 'solo', status: 'active', active: true, cancelAtPeriodEnd: false });
    const renews = Date.parse(billing.body.currentPeriodEnd);
    const expected = new Date();
    expected.setUTCMonth(expected.getUTCMonth() + 1);
    // Within a day of a month from now (the month-end clamp moves it by at most three days earlier).
    expect(Math.abs(renews - expected.getTime())).toBeLessThan(4 * 86_400_000);
  });

  it('a plan change goes through the local processor and its signed update event', async () => {
    const changed = await api('POST', '/api/billing', { action: 'change-plan', plan: 'collective' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ success: true, plan: 'collective', previousPlan: 'solo' });
    const billing = await api('GET', '/api/billing');
    expect(billing.body).toMatchObject({ plan: 'collective', status: 'active' });
    expect(billing.body.limits.agents).toBe(10);
    expect((await api('POST', '/api/billing', { action: 'change-plan', plan: 'collective' })).body.code).toBe('SAME_PLAN');
  });

  it('the billing portal is a local page that says what it offers, and returns to billing', async () => {
    const portal = await api('POST', '/api/billing', { action: 'billing-portal' });
    expect(portal.status).toBe(200);
    expect(portal.body.url).toMatch(new RegExp(`^${base}/local-card/portal\\?return=`));
    const page = await fetch(portal.body.url);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('nothing is charged');
    expect(text).toContain('/settings/billing');
  });

  it('deleting the subscribed account cancels the subscription locally and completes: the address can sign up again', async () => {
    const deleted = await api('DELETE', '/api/settings', { password: 'correct-horse-battery' });
    expect(deleted.status).toBe(202);
    const again = { email: 'newcomer@example.com', password: 'correct-horse-battery' };
    const registered = await until(async () => {
      const { status } = await api('POST', '/api/register', again);
      return status < 300 ? status : undefined;
    }, 'the deletion to free the address');
    expect(registered).toBeLessThan(300);
  }, 40_000);
});
