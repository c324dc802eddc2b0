import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOutbox } from '#adapters/email';
import { SUBSCRIPTION_ENDED } from '#domain/billing/subscription-end';
import { reloadConfig } from '#platform/config';
import { createAgent } from '#data/agents';
import { installSkill } from '#data/installed-skills';
import { ensureInstance, gatewayToken, getInstance } from '#data/instances';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { skill as emailSkill } from '#functions/http/skills/skills/email';
import { accountSession, call } from '../helpers/api';
import { captureEvents } from '../helpers/event-queue';
import { checkoutCompleted, deliverWebhook, subscriptionEvent, WEBHOOK_SECRET } from '../helpers/fake-stripe';
import { runSkill } from '../helpers/skill-call';
import { subscribe } from './agents-helpers';

/** A subscription's end reaches the runtime: its skill calls are refused and its instance is stopped, saying why. */

const CARD_ENV = { CARD_WEBHOOK_SECRET: WEBHOOK_SECRET };
beforeAll(() => {
  reloadConfig(CARD_ENV);
});
afterAll(() => {
  reloadConfig({ CARD_WEBHOOK_SECRET: undefined });
});

async function subscriberWithEmailSkill() {
  const user = await accountSession();
  const subscription = `sub_test_${randomUUID().slice(0, 12)}`;
  const created = Math.floor(Date.now() / 1000) - 60;
  expect((await deliverWebhook(checkoutCompleted({ userId: user.userId, plan: 'solo', subscription }, { created }))).status).toBe(200);
  const agent = await createAgent(user.userId, { name: 'Mail bot', model: 'openai/gpt-4o-mini', config: {}, source: 'api' }, 10);
  await installSkill(user.userId, agent.id, 'email', 10);
  await ensureInstance(user.userId, { ownerEmail: user.email, image: 'img', runtimeVersion: '1.2.3', jobOwner: 'test' });
  const cancel = () =>
    deliverWebhook(
      subscriptionEvent(
        'customer.subscription.deleted',
        { id: subscription, status: 'canceled', userId: user.userId, plan: 'solo' },
        { created: created + 30 },
      ),
    );
  return { user, agentId: agent.id, token: await gatewayToken(user.userId), cancel };
}

const sendMail = (userId: string, agentId: string, token: string, to: string) =>
  call('POST', `/api/instance/${userId}/runtime/agents/${agentId}/skills/email`, {
    bearer: token,
    body: { action: 'send', to, subject: 'Hold for 12 July', body: 'Can we confirm the hold?' },
  });

describe('a subscription that ends', () => {
  it("refuses the runtime's skill calls with 402 and sends nothing", async () => {
    const { user, agentId, token, cancel } = await subscriberWithEmailSkill();
    const before = `before-${randomUUID().slice(0, 8)}@example.com`;
    expect((await sendMail(user.userId, agentId, token, before)).status).toBe(200);
    expect(await readOutbox(before)).toHaveLength(1);

    expect((await cancel()).status).toBe(200);
    const after = `after-${randomUUID().slice(0, 8)}@example.com`;
    const refused = await sendMail(user.userId, agentId, token, after);
    expect(refused.status, refused.text).toBe(402);
    expect(refused.body.code).toBe('SUBSCRIPTION_REQUIRED');
    expect(await readOutbox(after)).toEqual([]);
  });

  it('counts email against the plan in force only: a lapsed plan sends nothing through the skill', async () => {
    const user = await accountSession();
    await subscribe(user.userId, 'solo', 'canceled');
    const to = `lapsed-${randomUUID().slice(0, 8)}@example.com`;
    const res = await runSkill(emailSkill, user.userId, { action: 'send', to, subject: 'Hold', body: 'Hold?' });
    expect(res.status).toBe(402);
    expect(await readOutbox(to)).toEqual([]);
  });

  it('stops the instance, with a lifecycle event and webhook that say why', async () => {
    const events = await captureEvents();
    try {
      const { user, cancel } = await subscriberWithEmailSkill();
      expect((await cancel()).status).toBe(200);
      const instance = await getInstance(user.userId, true);
      expect(instance).toMatchObject({ status: 'stopped', stopReason: SUBSCRIPTION_ENDED });
      const stopped = (await listLifecycleEvents(user.userId, 50)).events.filter((e) => e.type === 'instance.stopped');
      expect(stopped).toMatchObject([{ cause: 'billing', reason: SUBSCRIPTION_ENDED }]);
      const queued = (await events.drain()).filter((e) => e.type === 'instance.stopped' && (e.data as { userId?: string }).userId === user.userId);
      expect(queued.map((e) => e.data)).toMatchObject([{ cause: 'billing', reason: SUBSCRIPTION_ENDED }]);
      // A redelivery changes nothing more.
      expect((await cancel()).status).toBe(200);
      expect((await listLifecycleEvents(user.userId, 50)).events.filter((e) => e.type === 'instance.stopped')).toHaveLength(1);
    } finally {
      await events.stop();
    }
  });
});
