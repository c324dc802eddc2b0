import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as provisioner } from '#functions/workers/provisioner/handler';
import { readOutbox } from '#adapters/email';
import { fileStorage, objectKeyOf, pendingObjectKeyOf } from '#adapters/file-storage';
import { deletedAccountRecord, deletionMarker } from '#domain/accounts/deletion';
import { reloadConfig } from '#platform/config';
import { listInstalledSkills, skillQuotaUsed } from '#data/installed-skills';
import { getInstance } from '#data/instances';
import * as keys from '#data/keys';
import { listCatalogue } from '#data/skill-catalogue';
import { tenant } from '#data/tenant';
import { getUser } from '#data/users';
import { call, uniqueIp } from '../helpers/api';
import { checkoutCompleted, deliverWebhook, startFakeStripe, WEBHOOK_SECRET, type FakeStripe } from '../helpers/fake-stripe';
import { runSkill } from '../helpers/skill-call';
import { skill as fileManager } from '#functions/http/skills/skills/file-manager';
import { signUp } from './accounts-helpers';
import { drain, sqsEvent, sqsRecord, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed();
const downloadsOf = async (skillId: string) => (await listCatalogue()).find((s) => s.id === skillId)?.downloads;
let stripe: FakeStripe;

beforeAll(async () => {
  stripe = await startFakeStripe();
  reloadConfig({ ...stripe.env, CARD_WEBHOOK_SECRET: WEBHOOK_SECRET, CARD_PRICES: JSON.stringify({ solo: 'price_solo_m' }) });
});
afterAll(async () => {
  reloadConfig(
    Object.fromEntries(
      ['CARD_SECRET_KEY', 'CARD_API_HOST', 'CARD_API_PORT', 'CARD_API_PROTOCOL', 'CARD_WEBHOOK_SECRET', 'CARD_PRICES'].map((k) => [k, undefined]),
    ),
  );
  await stripe.close();
});

/** Runs the provisioner on everything queued; returns the ids of the records it reported failed. */
async function provisionerRuns() {
  const records = (await drain(bed.queueUrl)).map((m) => sqsRecord(m));
  return { records, failed: (await provisioner(sqsEvent(...records))).batchItemFailures.map((f) => f.itemIdentifier) };
}

/** A subscriber (through a confirmed checkout, the subscription known to the processor) with a running agent instance. */
async function subscriberWithRunningAgent() {
  const user = await signUp();
  const subscription = `sub_${randomUUID().slice(0, 12)}`;
  const customer = `cus_${randomUUID().slice(0, 12)}`;
  stripe.addSubscription({ id: subscription, customer, price: 'price_solo_m', userId: user.userId, plan: 'solo' });
  expect((await deliverWebhook(checkoutCompleted({ userId: user.userId, plan: 'solo', subscription, customer }))).status).toBe(200);
  expect((await call('POST', '/api/agents/provision', { session: user, body: { name: 'Doomed bot' }, ip: uniqueIp() })).status).toBe(201);
  expect((await provisionerRuns()).failed).toEqual([]);
  expect((await getInstance(user.userId, true))?.status).toBe('running');
  expect(await bed.launcher.aliveFor(user.userId)).toHaveLength(1);
  const key = await call('POST', '/api/keys', { session: user, body: { name: 'ci' } });
  const agentId = (await call('GET', '/api/agents', { session: user })).body.agents[0].id as string;
  expect((await call('POST', '/api/skills', { session: user, body: { skillId: 'setlist-oracle', agentId } })).status).toBe(200);
  expect(await skillQuotaUsed(user.userId, agentId)).toBe(1);
  return { user, subscription, agentId, apiKey: key.body.key as string };
}

describe('account deletion ends everything the account owns', () => {
  it('stops the instance process, cancels the card subscription, revokes sessions and keys, then deletes the data and sends the final email', async () => {
    const { user, subscription, agentId, apiKey } = await subscriberWithRunningAgent();
    const downloads = await downloadsOf('setlist-oracle');
    // File-manager objects: a confirmed upload, an upload by URL never confirmed, and a neighbour
    // whose id merely starts with this one's (a prefix listing must not reach it).
    const uploaded = await runSkill(fileManager, user.userId, {
      action: 'upload',
      name: 'rider.txt',
      contentBase64: Buffer.from('2x CDJ-3000\n').toString('base64'),
    });
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    const storage = fileStorage();
    await storage.put(pendingObjectKeyOf(user.userId, 'f_unconfirmed'), Buffer.from('half'), 'text/plain');
    const neighbour = objectKeyOf(`${user.userId}0`, 'f_kept');
    await storage.put(neighbour, Buffer.from('not theirs'), 'text/plain');
    expect(await storage.list(objectKeyOf(user.userId, ''))).toEqual([objectKeyOf(user.userId, uploaded.body.file.fileId)]);
    const res = await call('DELETE', '/api/settings', { session: user, body: { password: user.password } });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ success: true, status: 'deleting' });
    expect((await call('GET', '/api/settings', { session: user })).status).toBe(401);
    expect((await call('GET', '/api/keys', { bearer: apiKey })).status).toBe(401);
    expect((await deletionMarker(user.userId))?.state).toBe('deleting');

    expect((await provisionerRuns()).failed).toEqual([]);
    expect(await bed.launcher.aliveFor(user.userId)).toEqual([]);
    expect(stripe.subscriptions.get(subscription)!.status).toBe('canceled');
    expect(stripe.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${subscription}`)).toBe(true);
    expect(await getUser(user.userId, true)).toBeUndefined();
    expect((await tenant(user.userId).queryAll('', { consistent: true })).map((i) => i.sk)).toEqual([keys.sessionGate(user.userId).sk]);
    expect(await storage.list(objectKeyOf(user.userId, ''))).toEqual([]);
    expect(await storage.list(pendingObjectKeyOf(user.userId, ''))).toEqual([]);
    expect((await storage.get(neighbour))?.toString()).toBe('not theirs');
    // The agents go with the account, and so do their installed skills and per-agent skill counters;
    // the catalogue's `downloads` counts installs ever made, as after an uninstall: it never goes
    // down (other test files install the same skill meanwhile, so it may go up).
    expect(await listInstalledSkills(user.userId, agentId, true)).toEqual([]);
    expect(await skillQuotaUsed(user.userId, agentId)).toBe(0);
    expect(await downloadsOf('setlist-oracle')).toBeGreaterThanOrEqual(downloads ?? 0);
    expect(await deletedAccountRecord(user.userId)).toMatchObject({
      subscriptionId: subscription,
      subscriptionCancelled: { status: 'canceled' },
      instanceStopped: true,
    });
    const mail = await readOutbox(user.email);
    expect(mail.at(-1)).toMatchObject({ subject: 'Your account has been deleted' });
    expect(mail.at(-1)!.text).toContain('subscription was cancelled');
  });

  it('a failure part-way leaves the account deleting; the retry resumes and finishes without stopping or cancelling twice', async () => {
    const { user, subscription } = await subscriberWithRunningAgent();
    expect((await call('DELETE', '/api/settings', { session: user, body: { password: user.password } })).status).toBe(202);
    const queued = await drain(bed.queueUrl);
    stripe.failNext(500);
    const first = await provisioner(sqsEvent(...queued.map((m) => sqsRecord(m))));
    expect(first.batchItemFailures).toHaveLength(1);
    expect(await bed.launcher.aliveFor(user.userId)).toEqual([]);
    expect(await deletionMarker(user.userId)).toMatchObject({ state: 'deleting', instanceStopped: true });
    expect(stripe.subscriptions.get(subscription)!.status).toBe('active');
    expect(await getUser(user.userId, true)).toBeDefined();

    const stopsBefore = bed.launcher.stops.length;
    const retry = await provisioner(sqsEvent(...queued.map((m) => sqsRecord(m))));
    expect(retry.batchItemFailures).toEqual([]);
    expect(bed.launcher.stops.length).toBe(stopsBefore);
    expect(stripe.subscriptions.get(subscription)!.status).toBe('canceled');
    expect(await getUser(user.userId, true)).toBeUndefined();
    // A late redelivery finds nothing left to do.
    expect((await provisioner(sqsEvent(...queued.map((m) => sqsRecord(m))))).batchItemFailures).toEqual([]);
    expect(stripe.requests.filter((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${subscription}`)).toHaveLength(2);
  });
});
