import type { SQSRecord } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as provisioner } from '../../functions/provisioner/handler';
import { handler as webhookDelivery } from '../../functions/webhook-delivery/handler';
import type { PlatformEvent } from '../../shared/events/emit';
import { call, testSession, uniqueIp } from '../helpers/api';
import { captureEvents } from '../helpers/event-queue';
import { startWebhookReceiver } from '../helpers/fake-webhook-receiver';
import { drain, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed();
let events: Awaited<ReturnType<typeof captureEvents>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  [events, receiver] = await Promise.all([captureEvents(), startWebhookReceiver()]);
});
afterAll(async () => {
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

    // A failing receiver: the record is reported for an SQS retry, the attempt is logged, the retry delivers.
    receiver.setStatus(500);
    await call('POST', `/api/instance/${user.userId}/stop`, { session: user, ip: uniqueIp() });
    const stopEvents = (await events.drain()).filter((e) => e.accountId === user.userId);
    expect(stopEvents.map((e) => e.type)).toEqual(['instance.requested', 'instance.stopped']);
    const failed = await webhookDelivery(sqsEvent(...stopEvents.map((e) => deliveryRecord(e))));
    expect(failed.batchItemFailures).toHaveLength(2);
    receiver.setStatus(204);
    expect((await webhookDelivery(sqsEvent(...stopEvents.map((e) => deliveryRecord(e, 2))))).batchItemFailures).toEqual([]);
    const deliveries = (await call('GET', `/api/webhooks/endpoints/${endpoint.id}/deliveries?limit=100`, { session: user })).body.deliveries;
    const stopped = deliveries.filter((d: any) => d.eventId === stopEvents[1]!.id);
    expect(stopped).toEqual([
      expect.objectContaining({ type: 'instance.stopped', attempt: 2, outcome: 'delivered', statusCode: 204 }),
      expect.objectContaining({ type: 'instance.stopped', attempt: 1, outcome: 'failed', statusCode: 500 }),
    ]);
    // A third delivery of a delivered event skips the endpoint that already took it.
    const before = receiver.received.length;
    await webhookDelivery(sqsEvent(deliveryRecord(stopEvents[1]!, 3)));
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
