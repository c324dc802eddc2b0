import { describe, expect, it } from 'vitest';
import { handler as provisioner } from '#functions/workers/provisioner/handler';
import { AGENTS_SUNSET } from '#contract/agents';
import { appendRuntimeLogLines } from '#data/agent-log';
import { agentQuotaUsed } from '#data/agents';
import { getHeartbeat } from '#data/heartbeat';
import { accountSession, call, uniqueIp, type TestSession } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { chat, drain, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed();

async function launch() {
  const messages = await drain(bed.queueUrl);
  expect((await provisioner(sqsEvent(...messages.map((m) => sqsRecord(m))))).batchItemFailures).toEqual([]);
}

function expectDeprecation(headers: Record<string, string>, successor: string) {
  expect(headers.deprecation).toMatch(/^@\d+$/);
  expect(headers.sunset).toBe(new Date(AGENTS_SUNSET).toUTCString());
  expect(headers.link).toBe(`<${successor}>; rel="successor-version"`);
}

const tokenOf = async (user: TestSession) => (await call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() })).body.token as string;

describe('deprecated agent routes keep working, mapped onto their successors', () => {
  it('POST /api/agents provisions like /api/agents/provision, under the same plan limit, and says it is deprecated', async () => {
    const user = await accountSession();
    await subscribe(user.userId, 'starter');
    const created = await call('POST', '/api/agents', { session: user, body: { name: 'Legacy bot' }, ip: uniqueIp() });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ success: true, agent: { name: 'Legacy bot', status: 'provisioning' } });
    expectDeprecation(created.headers, '/api/agents/provision');
    expect((await call('GET', `/api/agents/${created.body.agent.id}`, { session: user })).status).toBe(200);
    const over = await call('POST', '/api/agents', { session: user, body: { name: 'Second' }, ip: uniqueIp() });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: 'AGENT_LIMIT_REACHED', current: 1, limit: 1 });
    expect((await call('POST', '/api/agents', { body: { name: 'x' }, ip: uniqueIp() })).status).toBe(401);
  });

  it('PUT /api/agents/{id} replaces the configuration like the config endpoint; 404 for another account', async () => {
    const user = await accountSession();
    await subscribe(user.userId, 'solo');
    const agentId = (await call('POST', '/api/agents/provision', { session: user, body: { name: 'x' }, ip: uniqueIp() })).body.agent.id;
    const put = await call('PUT', `/api/agents/${agentId}`, { session: user, body: { systemPrompt: 'Be brief.' } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ success: true, config: { systemPrompt: 'Be brief.' } });
    expectDeprecation(put.headers, `/api/agents/${agentId}/config`);
    expect((await call('GET', `/api/agents/${agentId}/config`, { session: user })).body).toEqual({ config: { systemPrompt: 'Be brief.' } });
    expect((await call('PUT', `/api/agents/${agentId}`, { session: user, body: { owner: 'me' } })).status).toBe(400);
    const other = await accountSession();
    expect((await call('PUT', `/api/agents/${agentId}`, { session: other, body: { systemPrompt: 'mine' } })).status).toBe(404);
  });

  it('DELETE /api/agents/{id} removes the agent, its history and memory, and gives its quota back; 404 after and cross-tenant', async () => {
    const user = await accountSession();
    await subscribe(user.userId, 'starter');
    const agentId = (await call('POST', '/api/agents/provision', { session: user, body: { name: 'Doomed' }, ip: uniqueIp() })).body.agent.id;
    await launch();
    const token = await tokenOf(user);
    const exchange = { agentId, messages: [{ role: 'user', content: 'hi' }] };
    expect((await call('POST', `/api/instance/${user.userId}/runtime/messages`, { bearer: token, body: exchange })).status).toBe(200);
    expect((await call('POST', '/api/memory', { session: user, body: { agentId, key: 'k', memory: 1 } })).status).toBe(200);
    const other = await accountSession();
    expect((await call('DELETE', `/api/agents/${agentId}`, { session: other })).status).toBe(404);
    expect(await agentQuotaUsed(user.userId)).toBe(1);

    const deleted = await call('DELETE', `/api/agents/${agentId}`, { session: user });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, id: agentId, deleted: true });
    expectDeprecation(deleted.headers, `/api/instance/${user.userId}/stop`);
    expect(await agentQuotaUsed(user.userId)).toBe(0);
    expect((await call('GET', `/api/agents/${agentId}`, { session: user })).status).toBe(404);
    expect((await call('GET', `/api/memory?agentId=${agentId}`, { session: user })).status).toBe(404);
    expect((await call('DELETE', `/api/agents/${agentId}`, { session: user })).status).toBe(404);
    // The quota unit came back: the starter plan's one agent can be provisioned again.
    expect((await call('POST', '/api/agents/provision', { session: user, body: { name: 'Next' }, ip: uniqueIp() })).status).toBe(201);
  });

  it('the OpenAPI document marks them deprecated and names what each maps to', async () => {
    const doc = (await call('GET', '/api/openapi.json')).body;
    for (const [path, method, successor] of [
      ['/api/agents', 'post', '/api/agents/provision'],
      ['/api/agents/{id}', 'put', '/api/agents/{id}/config'],
      ['/api/agents/{id}', 'delete', '/api/instance/{userId}/stop'],
    ] as const) {
      const op = doc.paths[path][method];
      expect(op.deprecated).toBe(true);
      expect(op.description).toContain(`Maps onto`);
      expect(op.description).toContain(successor);
      expect(Object.keys(op.responses['200'] ?? op.responses['201']).length).toBeGreaterThan(0);
      expect((op.responses['200'] ?? op.responses['201']).headers).toHaveProperty('Sunset');
    }
    expect(doc.paths['/api/agents/{id}/logs'].get.deprecated).toBeUndefined();
  });
});

describe('GET /api/agents/{id}/logs: the per-agent log', () => {
  it('merges runtime lines, lifecycle events and messages newest first, cursor-paginated, owner only', async () => {
    const user = await accountSession();
    await subscribe(user.userId, 'solo');
    const agentId = (await call('POST', '/api/agents/provision', { session: user, body: { name: 'Logged' }, ip: uniqueIp() })).body.agent.id;
    await launch();
    const token = await tokenOf(user);
    const exchange = {
      agentId,
      messages: [
        { role: 'user', content: 'Which dates are open?' },
        { role: 'assistant', content: 'June 14.' },
      ],
    };
    expect((await call('POST', `/api/instance/${user.userId}/runtime/messages`, { bearer: token, body: exchange })).status).toBe(200);
    await appendRuntimeLogLines(user.userId, [
      { stream: 'stderr', line: 'for another agent', agentId: 'agt_someoneelse' },
      { stream: 'stderr', line: JSON.stringify({ level: 'INFO', message: 'mine', agentId }), level: 'INFO', agentId },
    ]);

    const readLog = () => call('GET', `/api/agents/${agentId}/logs?limit=200`, { session: user });
    const runtimeLines = (res: Awaited<ReturnType<typeof readLog>>): string[] =>
      (res.body.entries ?? []).filter((e: { kind: string }) => e.kind === 'runtime').map((e: { line: string }) => e.line as string);
    // A chat through the running runtime: the runtime reports it handled it, naming the agent (never the content).
    const { websocketUrl } = (await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent;
    expect((await chat(`${websocketUrl}?token=${token}`, 'Is the 14th still free?')).type).toBe('message');
    const chatHandled = (l: string) => l.includes('"chat handled"') && l.includes(`"agentId":"${agentId}"`);
    // The launcher stores the runtime's output in batches (after a short flush timer): wait for its start line and the chat.
    let all = await readLog();
    for (let tries = 0; tries < 50 && !(runtimeLines(all).some((l) => l.includes('state loaded')) && runtimeLines(all).some(chatHandled)); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      all = await readLog();
    }
    expect(all.status).toBe(200);
    const kinds = new Set(all.body.entries.map((e: { kind: string }) => e.kind));
    expect(kinds).toEqual(new Set(['runtime', 'lifecycle', 'message']));
    const lines = runtimeLines(all);
    expect(lines.some((l: string) => l.includes('"mine"'))).toBe(true);
    expect(lines).not.toContain('for another agent');
    // The launcher captured the runtime's own output (it logs "state loaded; ready" once it started, then each chat it handled).
    expect(lines.some((l: string) => l.includes('state loaded'))).toBe(true);
    const handled = all.body.entries.find((e: { kind: string; line?: string }) => e.kind === 'runtime' && chatHandled(e.line!));
    expect(handled).toMatchObject({ stream: 'stderr', level: 'INFO' });
    expect(handled.line).not.toContain('Is the 14th still free?');
    // The instance that started running got the heartbeat, which is on by default.
    expect(await getHeartbeat(user.userId, true)).toMatchObject({ enabled: true, frequency: '3h' });
    expect(all.body.entries.filter((e: { kind: string }) => e.kind === 'message').map((e: { content: string }) => e.content)).toEqual([
      fakeAnswerTo('Is the 14th still free?'),
      'Is the 14th still free?',
      'June 14.',
      'Which dates are open?',
    ]);
    const times = all.body.entries.map((e: { at: string }) => e.at);
    expect([...times].sort().reverse()).toEqual(times);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { entries: { id: string }[]; cursor: string | null } } = await call(
        'GET',
        `/api/agents/${agentId}/logs?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { session: user },
      );
      expect(page.status).toBe(200);
      expect(page.body.entries.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.entries.map((e) => e.id));
      cursor = page.body.cursor;
    } while (cursor);
    expect(seen).toEqual(all.body.entries.map((e: { id: string }) => e.id));

    expect((await call('GET', `/api/agents/${agentId}/logs?cursor=bad`, { session: user })).status).toBe(400);
    const other = await accountSession();
    expect((await call('GET', `/api/agents/${agentId}/logs`, { session: other })).status).toBe(404);
  });

  it('answers server-sent events with Accept: text/event-stream, following new entries', async () => {
    const user = await accountSession();
    await subscribe(user.userId, 'solo');
    const agentId = (await call('POST', '/api/agents/provision', { session: user, body: { name: 'Streamed' }, ip: uniqueIp() })).body.agent.id;
    await appendRuntimeLogLines(user.userId, [{ stream: 'runtime', line: 'before the stream', agentId }]);
    const streamed = call('GET', `/api/agents/${agentId}/logs?follow=2`, { session: user, headers: { accept: 'text/event-stream' } });
    setTimeout(() => void appendRuntimeLogLines(user.userId, [{ stream: 'runtime', line: 'arrived while following', agentId }]), 300);
    const res = await streamed;
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = res.text!.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toMatch(/^event: end\n/);
    expect(events.some((e) => e.startsWith('event: entry') && e.includes('before the stream'))).toBe(true);
    expect(events.some((e) => e.startsWith('event: entry') && e.includes('arrived while following'))).toBe(true);
  });
});
