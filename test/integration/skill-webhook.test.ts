import type { SQSRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/webhook';
import { handler as webhookDelivery } from '#functions/workers/webhook-delivery/handler';
import { reloadConfig } from '#platform/config';
import type { PlatformEvent } from '#adapters/events-queue';
import { resetLogger } from '#platform/logger';
import { startCountingServer } from '../helpers/counting-server';
import { captureEvents } from '../helpers/event-queue';
import { startWebhookReceiver } from '../helpers/fake-webhook-receiver';
import { newTestUserId, runSkill } from '../helpers/skill-call';
import { sqsEvent, sqsRecord } from './agents-helpers';
import { captureWrites } from '../helpers/capture-writes';

let events: Awaited<ReturnType<typeof captureEvents>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let internal: Awaited<ReturnType<typeof startCountingServer>>;
const logLines: string[] = [];
const seen: string[] = [];
let restoreWrites: () => void;

const run = async (userId: string, body: Record<string, unknown>) => {
  const out = await runSkill(skill, userId, body);
  seen.push(JSON.stringify(out.body));
  return out;
};

const delivery = (event: PlatformEvent, receiveCount: number): SQSRecord => ({
  ...sqsRecord(event),
  attributes: { ...sqsRecord(event).attributes, ApproximateReceiveCount: String(receiveCount) },
});

beforeAll(async () => {
  [events, receiver, internal] = await Promise.all([captureEvents(), startWebhookReceiver(), startCountingServer((_q, res) => res.end())]);
  // Retries due at once, so the queued retry can be handed straight to the worker.
  reloadConfig({ FETCH_ALLOWED_LOOPBACK: new URL(receiver.url).host, LOG_LEVEL: 'DEBUG', WEBHOOK_RETRY_SCHEDULE_MS: '0' });
  resetLogger();
  restoreWrites = captureWrites(logLines);
});

afterAll(async () => {
  restoreWrites();
  reloadConfig({ FETCH_ALLOWED_LOOPBACK: undefined, LOG_LEVEL: 'SILENT' });
  resetLogger();
  await Promise.all([events.stop(), receiver.close(), internal.close()]);
});

describe('webhook', () => {
  it('registers an endpoint, sends a signed message the receiver verifies, and retries a failure with the same webhook-id', async () => {
    const userId = newTestUserId();
    const registered = await run(userId, { action: 'register', url: receiver.url });
    expect(registered.status).toBe(200);
    const { endpoint, secret } = registered.body;
    expect(secret).toMatch(/^whsec_/);
    expect(endpoint).toMatchObject({ endpointId: expect.stringMatching(/^whe_/), url: receiver.url });
    const listed = await run(userId, { action: 'list' });
    expect(listed.body).toEqual({ success: true, endpoints: [endpoint], count: 1 });

    const sent = await run(userId, { action: 'send', endpointId: endpoint.endpointId, type: 'show.announced', payload: { city: 'Leeds', capacity: 500 } });
    expect(sent.body).toMatchObject({ queued: true, duplicate: false, message: { endpointId: endpoint.endpointId, type: 'show.announced' } });
    const [queued, ...others] = (await events.drain()).filter((e) => e.accountId === userId);
    expect(others).toEqual([]);
    expect(queued).toMatchObject({ id: sent.body.message.messageId, endpointId: endpoint.endpointId, type: 'show.announced' });
    expect((await webhookDelivery(sqsEvent(delivery(queued!, 1)))).batchItemFailures).toEqual([]);

    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    const verified = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as any;
    expect(verified).toEqual({ id: queued!.id, type: 'show.announced', timestamp: queued!.timestamp, data: { city: 'Leeds', capacity: 500 } });
    expect(got.headers['webhook-id']).toBe(queued!.id);
    expect(() =>
      new Webhook(`whsec_${Buffer.from('not-the-endpoint-secret-00').toString('base64')}`).verify(got.body, got.headers as Record<string, string>),
    ).toThrow();

    // A failing receiver: the attempt is logged and a retry queued for that endpoint; it succeeds with the same id.
    receiver.setStatus(503);
    const second = await run(userId, {
      action: 'send',
      endpointId: endpoint.endpointId,
      type: 'ticket.sold',
      payload: { tier: 'vip' },
      id: 'msg_tour-leeds-0001',
    });
    expect(second.body.message.messageId).toBe('msg_tour-leeds-0001');
    const [retried] = (await events.drain()).filter((e) => e.accountId === userId);
    expect((await webhookDelivery(sqsEvent(delivery(retried!, 1)))).batchItemFailures).toEqual([]);
    const [next, ...more] = (await events.drain()).filter((e) => e.accountId === userId);
    expect(more).toEqual([]);
    expect(next).toMatchObject({ id: 'msg_tour-leeds-0001', endpointId: endpoint.endpointId, delivery: { target: endpoint.endpointId, step: 2 } });
    receiver.setStatus(204);
    expect((await webhookDelivery(sqsEvent(delivery(next!, 1)))).batchItemFailures).toEqual([]);
    // The last step of the schedule was that one: nothing more is queued.
    expect((await events.drain()).filter((e) => e.accountId === userId)).toEqual([]);
    const attempts = receiver.received.slice(1);
    expect(attempts.map((r) => r.headers['webhook-id'])).toEqual(['msg_tour-leeds-0001', 'msg_tour-leeds-0001']);
    expect(new Webhook(secret).verify(attempts[1]!.body, attempts[1]!.headers as Record<string, string>)).toMatchObject({ data: { tier: 'vip' } });

    const log = await run(userId, { action: 'deliveries', endpointId: endpoint.endpointId });
    expect(log.body.deliveries).toEqual([
      expect.objectContaining({ eventId: 'msg_tour-leeds-0001', type: 'ticket.sold', attempt: 2, outcome: 'delivered', statusCode: 204 }),
      expect.objectContaining({ eventId: 'msg_tour-leeds-0001', type: 'ticket.sold', attempt: 1, outcome: 'failed', statusCode: 503 }),
      expect.objectContaining({ eventId: queued!.id, type: 'show.announced', attempt: 1, outcome: 'delivered', statusCode: 204 }),
    ]);

    // The same id again (a retried call) queues nothing; the id for another message is refused.
    const again = await run(userId, {
      action: 'send',
      endpointId: endpoint.endpointId,
      type: 'ticket.sold',
      payload: { tier: 'vip' },
      id: 'msg_tour-leeds-0001',
    });
    expect(again.body).toMatchObject({ queued: false, duplicate: true, message: { messageId: 'msg_tour-leeds-0001' } });
    expect((await run(userId, { action: 'send', endpointId: endpoint.endpointId, type: 'show.moved', payload: {}, id: 'msg_tour-leeds-0001' })).body.code).toBe(
      'MESSAGE_ID_REUSED',
    );
    expect((await events.drain()).filter((e) => e.accountId === userId)).toEqual([]);

    expect((await run(userId, { action: 'remove', endpointId: endpoint.endpointId })).body).toEqual({ success: true, removed: endpoint.endpointId });
    expect((await run(userId, { action: 'list' })).body.count).toBe(0);
  });

  it('refuses endpoints on loopback, private or metadata addresses, and never connects to them', async () => {
    const userId = newTestUserId();
    for (const url of [
      internal.url('/hook'),
      `http://localhost:${internal.port}/`,
      `http://2130706433:${internal.port}/`,
      `http://[::1]:${internal.port}/`,
      'http://169.254.169.254/hook',
      'http://10.1.2.3/hook',
    ]) {
      expect(await run(userId, { action: 'register', url }), url).toMatchObject({ status: 400, body: { code: 'URL_NOT_ALLOWED' } });
    }
    expect((await run(userId, { action: 'list' })).body).toEqual({ success: true, endpoints: [], count: 0 });
    expect(internal.connections()).toBe(0);
  });

  it("keeps accounts apart: another account's endpoint is 404 for every action", async () => {
    const owner = newTestUserId();
    const { endpoint } = (await run(owner, { action: 'register', url: receiver.url })).body;
    const stranger = newTestUserId();
    for (const body of [
      { action: 'send', endpointId: endpoint.endpointId, type: 'show.announced', payload: {} },
      { action: 'deliveries', endpointId: endpoint.endpointId },
      { action: 'remove', endpointId: endpoint.endpointId },
    ])
      expect((await run(stranger, body)).status).toBe(404);
    expect((await run(stranger, { action: 'list' })).body.endpoints).toEqual([]);
    expect((await run(owner, { action: 'list' })).body.count).toBe(1);
  });

  it('refuses invalid bodies with 400', async () => {
    const userId = newTestUserId();
    for (const body of [
      { action: 'register' },
      { action: 'register', url: 'ftp://example.com/' },
      { action: 'send', endpointId: 'whe_AbCdEfGhIjKl', type: 'Not A Type', payload: {} },
      { action: 'send', endpointId: 'whe_AbCdEfGhIjKl', type: 'show.announced' },
      { action: 'send', endpointId: 'nope', type: 'show.announced', payload: {} },
      { action: 'deliveries', endpointId: 'whe_AbCdEfGhIjKl', limit: 0 },
      { action: 'explode' },
    ])
      expect((await run(userId, body)).status, JSON.stringify(body)).toBe(400);
  });

  it('no response or log line carries an endpoint secret', () => {
    const secrets = seen.flatMap((s) => [...s.matchAll(/whsec_([A-Za-z0-9+/=]+)/g)].map((m) => m[1]!));
    expect(secrets.length).toBeGreaterThan(1);
    const logs = logLines.join('\n');
    expect(logLines.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(logs).not.toContain(secret);
    // Shown once, at registration: no other answer repeats it.
    for (const secret of secrets) expect(seen.filter((s) => s.includes(secret))).toHaveLength(1);
  });
});
