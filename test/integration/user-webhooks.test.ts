import type { SQSRecord } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as provisioner } from '#functions/workers/provisioner/handler';
import { handler as webhookDelivery } from '#functions/workers/webhook-delivery/handler';
import { reloadConfig } from '#platform/config';
import type { PlatformEvent } from '#adapters/events-queue';
import { call, testSession, uniqueIp } from '../helpers/api';
import { captureEvents } from '../helpers/event-queue';
import { startWebhookReceiver } from '../helpers/fake-webhook-receiver';
import { drain, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed();
let events: Awaited<ReturnType<typeof captureEvents>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  [events, receiver] = await Promise.all([captureEvents(), startWebhookReceiver()]);
  // Retries due at once, so a queued retry can be handed straight to the worker.
  reloadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '0,0' });
});
afterAll(async () => {
  reloadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: undefined });
  await Promise.all([events.stop(), receiver.close()]);
});

const deliveryRecord = (event: PlatformEvent, receiveCount = 1): SQSRecord => ({
  ...sqsRecord(event, randomUUID()),
  attributes: { ApproximateReceiveCount: String(receiveCount) } as SQSRecord['attributes'],
});

describe('account webhook endpoints', () => {
  it('delivers signed instance events to the endpoints a user registered, logs each attempt and retries a failure', async () => {
    const user = await testSession();
    await subscribe(user.userId);
    const created = await call('POST', '/api/webhooks/endpoints', { session: user, body: { url: receiver.url, events: ['instance.*'] } });
    expect(created.status).toBe(201);
    const { endpoint, secret } = created.body;
    expect(secret).toMatch(/^whsec_/);
    const listed = await call('GET', '/api/webhooks/endpoints', { session: user });
    expect(listed.body.endpoints).toEqual([endpoint]);
    expect(listed.text).not.toContain(secret.slice(6));

    await call('POST', '/api/agents/provision', { session: user, body: { name: 'Hooked bot' }, ip: uniqueIp() });
    const work = await drain(bed.queueUrl);
    expect((await provisioner(sqsEvent(...work.map((m) => sqsRecord(m))))).batchItemFailures).toEqual([]);

    const queued = (await events.drain()).filter((e) => e.accountId === user.userId);
    expect(queued.map((e) => e.type)).toEqual(['instance.requested', 'instance.launching', 'instance.running', 'agent.running']);
    expect((await webhookDelivery(sqsEvent(...queued.map((e) => deliveryRecord(e))))).batchItemFailures).toEqual([]);

    // agent.* was not asked for; the three instance events arrive signed with the endpoint's secret.
    expect(receiver.received).toHaveLength(3);
    const running = receiver.received.find((r) => JSON.parse(r.body).type === 'instance.running')!;
    const verified = new Webhook(secret).verify(running.body, running.headers as Record<string, string>) as any;
    expect(verified).toMatchObject({ type: 'instance.running', data: { userId: user.userId, status: 'running', cause: 'provisioner' } });
    expect(verified.accountId).toBeUndefined();
    expect(() =>
      new Webhook(`whsec_${Buffer.from('another-secret-entirely-000').toString('base64')}`).verify(running.body, running.headers as Record<string, string>),
    ).toThrow();
    const log = await call('GET', `/api/instance/${user.userId}/events`, { session: user, ip: uniqueIp() });
    expect(log.body.events.find((e: any) => e.type === 'instance.running').id).toBe(verified.id);

    // A failing receiver: the attempt is logged and a retry of each event queued for the endpoint; the retry delivers.
    receiver.setStatus(500);
    await call('POST', `/api/instance/${user.userId}/stop`, { session: user, ip: uniqueIp() });
    const stopEvents = (await events.drain()).filter((e) => e.accountId === user.userId);
    expect(stopEvents.map((e) => e.type)).toEqual(['instance.requested', 'instance.stopped']);
    const failed = await webhookDelivery(sqsEvent(...stopEvents.map((e) => deliveryRecord(e))));
    expect(failed.batchItemFailures).toEqual([]);
    const retries = (await events.drain()).filter((e) => e.accountId === user.userId) as (PlatformEvent & { delivery?: { target: string; step: number } })[];
    expect(retries.map((e) => [e.id, e.delivery?.target, e.delivery?.step]).sort()).toEqual(stopEvents.map((e) => [e.id, endpoint.id, 2]).sort());
    receiver.setStatus(204);
    expect((await webhookDelivery(sqsEvent(...retries.map((e) => deliveryRecord(e))))).batchItemFailures).toEqual([]);
    const deliveries = (await call('GET', `/api/webhooks/endpoints/${endpoint.id}/deliveries?limit=100`, { session: user })).body.deliveries;
    const stopped = deliveries.filter((d: any) => d.eventId === stopEvents[1]!.id);
    expect(stopped).toEqual([
      expect.objectContaining({ type: 'instance.stopped', attempt: 2, outcome: 'delivered', statusCode: 204, durationMs: expect.any(Number) }),
      expect.objectContaining({ type: 'instance.stopped', attempt: 1, outcome: 'failed', statusCode: 500, nextAttemptAt: expect.any(String) }),
    ]);
    expect(stopped[0].nextAttemptAt).toBeUndefined();
    // The success ended the failure streak the endpoint showed.
    expect((await call('GET', '/api/webhooks/endpoints', { session: user })).body.endpoints[0]).toEqual({ ...endpoint, enabled: true });
    // The same messages again (SQS delivers at least once) skip the endpoint that already took them.
    const before = receiver.received.length;
    await webhookDelivery(sqsEvent(...[...stopEvents, ...retries].map((e) => deliveryRecord(e, 2))));
    expect(receiver.received).toHaveLength(before);
    await drain(bed.queueUrl);
  });

  it("keeps endpoints to their owner: another user's id is 404, and deletion stops deliveries", async () => {
    const owner = await testSession();
    const intruder = await testSession();
    const { endpoint } = (await call('POST', '/api/webhooks/endpoints', { session: owner, body: { url: receiver.url } })).body;
    expect(endpoint.events).toContain('agent.error');
    expect((await call('GET', `/api/webhooks/endpoints/${endpoint.id}/deliveries`, { session: intruder })).status).toBe(404);
    expect((await call('DELETE', `/api/webhooks/endpoints/${endpoint.id}`, { session: intruder })).status).toBe(404);
    expect((await call('GET', '/api/webhooks/endpoints', { session: intruder })).body.endpoints).toEqual([]);
    expect((await call('DELETE', `/api/webhooks/endpoints/${endpoint.id}`, { session: owner })).status).toBe(200);
    expect((await call('GET', '/api/webhooks/endpoints', { session: owner })).body.endpoints).toEqual([]);
    expect((await call('POST', '/api/webhooks/endpoints', { session: owner, body: { url: receiver.url, events: ['user.created'] } })).status).toBe(400);
  });
});
