import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetCloudWatchLogsClient, runtimeLogStreamOf } from '#adapters/runtime-logs-cloudwatch';
import { reloadConfig } from '#platform/config';
import { appendExchange, createAgent } from '#data/agents';
import { ensureInstance, settleLaunch, settlePendingAgents } from '#data/instances';
import { accountSession, call, type TestSession } from '../helpers/api';
import { type FakeCloudWatchLogs, fakeCloudWatchLogs } from '../helpers/fake-cloudwatch-logs';

/**
 * In AWS the runtime's output goes to CloudWatch Logs (the task's awslogs stream), so the per-agent
 * log reads it from there: a fake CloudWatch Logs on loopback, the real SDK client and the route.
 */

const GROUP = '/agent-platform/runtime';
const DAY = 86_400_000;
let logs: FakeCloudWatchLogs;

beforeAll(async () => {
  logs = await fakeCloudWatchLogs(GROUP);
  reloadConfig({ RUNTIME_LOG_GROUP: GROUP, CLOUDWATCH_LOGS_ENDPOINT: logs.endpoint });
  resetCloudWatchLogsClient();
});

afterAll(async () => {
  reloadConfig({ RUNTIME_LOG_GROUP: undefined, CLOUDWATCH_LOGS_ENDPOINT: undefined });
  resetCloudWatchLogsClient();
  await logs.close();
});

/** An account whose instance runs as the ECS task `taskId` (or a local process), with one agent. */
async function accountWithInstance(handle: { launcher: 'ecs' | 'local'; id: string }) {
  const user = await accountSession();
  await ensureInstance(user.userId, { ownerEmail: user.email, image: 'runtime:test', runtimeVersion: '1.0.0', jobOwner: 'test' });
  const agentId = (await createAgent(user.userId, { name: 'Logged in AWS', model: 'test/model', config: {}, source: 'api' }, 10)).id;
  await settleLaunch(user.userId, 1, { status: 'running', set: { handle: { ...handle, endpoint: 'http://127.0.0.1:9' } } });
  await settlePendingAgents(user.userId);
  return { user, agentId };
}

const json = (o: Record<string, unknown>) => JSON.stringify({ service: 'agent-runtime', timestamp: new Date().toISOString(), ...o });

type Entry = { id: string; kind: string; at: string; line?: string; stream?: string; level?: string | null; content?: string };
const readLog = async (user: TestSession, agentId: string, query = 'limit=200') => {
  const res = await call('GET', `/api/agents/${agentId}/logs?${query}`, { session: user });
  expect(res.status).toBe(200);
  return res.body as { entries: Entry[]; cursor: string | null };
};
const runtimeEntries = (page: { entries: Entry[] }) => page.entries.filter((e) => e.kind === 'runtime');

describe('GET /api/agents/{id}/logs reads the runtime lines from CloudWatch Logs in AWS', () => {
  it("merges the agent's and the instance's lines of the task stream with its messages, newest first, paged, within the retention window", async () => {
    const taskArn = `arn:aws:ecs:us-east-1:123456789012:task/platform-cluster/${'a1b2c3d4'.repeat(4)}`;
    const { user, agentId } = await accountWithInstance({ launcher: 'ecs', id: taskArn });
    const stream = runtimeLogStreamOf(taskArn);
    expect(stream).toBe(`runtime/runtime/${'a1b2c3d4'.repeat(4)}`);
    const now = Date.now();
    const events = [
      { timestamp: now - 8 * DAY, message: json({ level: 'INFO', message: 'older than the retention', agentId }) },
      { timestamp: now - 60_000, message: json({ level: 'INFO', message: 'state loaded; ready' }) },
      { timestamp: now - 50_000, message: json({ level: 'INFO', message: 'chat handled', agentId, ms: 12 }) },
      { timestamp: now - 45_000, message: json({ level: 'ERROR', message: 'an exchange failed', agentId: 'agt_other' }) },
      { timestamp: now - 40_000, message: 'plain output of a dependency' },
      // Two lines in the same millisecond: a page edge between them must lose neither.
      { timestamp: now - 30_000, message: json({ level: 'INFO', message: 'same ms one', agentId }) },
      { timestamp: now - 30_000, message: json({ level: 'INFO', message: 'same ms two', agentId }) },
    ];
    // Another agent's chatter fills whole stream pages between the agent's lines.
    for (let i = 0; i < 250; i += 1)
      events.push({ timestamp: now - 20_000 + i, message: json({ level: 'INFO', message: `other ${i}`, agentId: 'agt_other' }) });
    logs.streams.set(stream, events);
    await appendExchange(user.userId, agentId, { messages: [{ role: 'user', content: 'Are you logging?' }], responseMs: 3 });
    const requestsBefore = logs.requests.length;

    const all = await readLog(user, agentId);
    const said = runtimeEntries(all).map((e) => (e.line!.startsWith('{') ? JSON.parse(e.line!).message : e.line));
    // Lines of one millisecond are ordered by their ids, which CloudWatch does not give: either order.
    expect(said.slice(0, 2).sort()).toEqual(['same ms one', 'same ms two']);
    expect(said.slice(2)).toEqual(['plain output of a dependency', 'chat handled', 'state loaded; ready']);
    const chat = runtimeEntries(all).find((e) => e.line!.includes('chat handled'))!;
    expect(chat).toMatchObject({ stream: 'runtime', level: 'INFO', at: new Date(now - 50_000).toISOString() });
    expect(chat.id).toMatch(/^cw_[0-9a-f]{24}$/);
    expect(runtimeEntries(all).find((e) => e.line === 'plain output of a dependency')).toMatchObject({ stream: 'stdout', level: null });
    expect(all.entries.some((e) => e.kind === 'message' && e.content === 'Are you logging?')).toBe(true);
    const times = all.entries.map((e) => e.at);
    expect([...times].sort().reverse()).toEqual(times);

    // What went over the wire: signed JSON 1.1 GetLogEvents of the task's stream, backwards, bounded to the retention window.
    const sent = logs.requests.slice(requestsBefore);
    expect(sent.length).toBeGreaterThan(1);
    for (const r of sent) {
      expect(r.target).toBe('Logs_20140328.GetLogEvents');
      expect(r.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[a-z0-9-]+\/logs\/aws4_request/);
      expect(r.body).toMatchObject({ logGroupName: GROUP, logStreamName: stream, startFromHead: false });
      expect(r.body.startTime).toBeGreaterThanOrEqual(now - 7 * DAY - 60_000);
      expect(r.body.endTime).toBeGreaterThan(r.body.startTime);
    }

    // Page by page with the opaque cursor: the same entries, in the same order, none twice.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await readLog(user, agentId, `limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.entries.length).toBeLessThanOrEqual(2);
      seen.push(...page.entries.map((e) => e.id));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toEqual(all.entries.map((e) => e.id));

    const other = await accountSession();
    expect((await call('GET', `/api/agents/${agentId}/logs`, { session: other })).status).toBe(404);
  });

  it('a task whose stream does not exist yet has no runtime lines; an instance that is not an ECS task is not looked up', async () => {
    const fresh = await accountWithInstance({ launcher: 'ecs', id: 'arn:aws:ecs:us-east-1:123456789012:task/platform-cluster/notyetwritten' });
    const before = logs.requests.length;
    expect(runtimeEntries(await readLog(fresh.user, fresh.agentId))).toEqual([]);
    expect(logs.requests.length).toBeGreaterThan(before);

    const local = await accountWithInstance({ launcher: 'local', id: '4242' });
    const asked = logs.requests.length;
    const page = await readLog(local.user, local.agentId);
    expect(runtimeEntries(page)).toEqual([]);
    expect(page.entries.some((e) => e.kind === 'lifecycle')).toBe(true);
    expect(logs.requests.length).toBe(asked);
  });

  it('streams the CloudWatch lines as server-sent events', async () => {
    const taskArn = 'arn:aws:ecs:us-east-1:123456789012:task/platform-cluster/ssestream01';
    const { user, agentId } = await accountWithInstance({ launcher: 'ecs', id: taskArn });
    logs.streams.set(runtimeLogStreamOf(taskArn), [{ timestamp: Date.now() - 1000, message: json({ level: 'INFO', message: 'over SSE', agentId }) }]);
    const res = await call('GET', `/api/agents/${agentId}/logs?follow=0`, { session: user, headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    const frames = res.text!.split('\n\n').filter(Boolean);
    expect(frames.some((f) => f.startsWith('event: entry') && f.includes('over SSE'))).toBe(true);
    expect(frames.at(-1)).toMatch(/^event: end\n/);
  });
});
