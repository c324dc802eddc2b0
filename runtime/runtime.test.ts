import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createRuntime } from './app';
import { platformClient, type AgentState, type ChatMessage } from './platform';

/**
 * The runtime on its own, against a fake platform on loopback that speaks the platform's runtime
 * routes (GET state, POST messages, POST chat/completions). The real platform side is covered by
 * test/integration/provisioner*.test.ts and the e2e test.
 */

const TOKEN = 'gw_test-token-of-this-instance';
const USER = 'u_runtime_test';

interface FakePlatform {
  url: string;
  agents: Map<string, AgentState>;
  completions: { agentId: string; messages: ChatMessage[] }[];
  reports: { agentId: string; messages: ChatMessage[]; failed?: boolean; responseMs?: number }[];
  modelConfigured: boolean;
  /** A streamed completion waits for this before its last piece (a slow model); rejecting breaks the stream with an `error` event. */
  beforeLastPiece: (() => Promise<void>) | undefined;
  close(): Promise<void>;
}

async function fakePlatform(): Promise<FakePlatform> {
  const fake = {
    url: '',
    agents: new Map<string, AgentState>(),
    completions: [] as FakePlatform['completions'],
    reports: [] as FakePlatform['reports'],
    modelConfigured: true,
    beforeLastPiece: undefined as FakePlatform['beforeLastPiece'],
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { error: 'bad token', code: 'TOKEN_INVALID' });
    const url = new URL(req.url!, 'http://x');
    const base = `/api/instance/${USER}/runtime`;
    if (req.method === 'GET' && url.pathname === `${base}/state`) {
      const only = url.searchParams.get('agentId');
      const agents = [...fake.agents.values()].filter((a) => !only || a.id === only);
      return send(200, { userId: USER, runtimeVersion: '9.9.9', agents: structuredClone(agents) });
    }
    if (req.method === 'POST' && url.pathname === `${base}/messages`) {
      fake.reports.push(body);
      const agent = fake.agents.get(body.agentId);
      agent?.messages.push(...body.messages.map((m: ChatMessage) => ({ ...m, createdAt: new Date().toISOString() })));
      return send(200, { success: true });
    }
    if (req.method === 'POST' && url.pathname === `${base}/chat/completions`) {
      if (!fake.modelConfigured) return send(503, { error: 'no model provider is configured', code: 'MODEL_NOT_CONFIGURED' });
      fake.completions.push(body);
      const last = body.messages.at(-1).content as string;
      if (body.stream === true) return streamCompletion(res, `echo: ${last}`);
      return send(200, { id: 'c1', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: `echo: ${last}` } }] });
    }
    send(404, { error: 'no route' });
  });
  /** The platform's streamed completion: `delta` per word, then `done` with the usage. */
  async function streamCompletion(res: http.ServerResponse, answer: string) {
    const event = (name: string, data: unknown) => res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    const pieces = answer.split(/(?= )/);
    for (const piece of pieces.slice(0, -1)) event('delta', { content: piece });
    try {
      await fake.beforeLastPiece?.();
    } catch {
      event('error', { error: 'the model provider failed while streaming', code: 'MODEL_PROVIDER_ERROR' });
      return res.end();
    }
    event('delta', { content: pieces.at(-1) });
    event('done', { id: 'c1', model: 'm', finish_reason: 'stop', usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } });
    res.end();
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

const agent = (id: string, extra: Partial<AgentState> = {}): AgentState => ({
  id,
  name: `Agent ${id}`,
  model: 'openai/gpt-4o-mini',
  config: {},
  memory: {},
  messages: [],
  ...extra,
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function startRuntime(platform: FakePlatform, token = TOKEN) {
  const runtime = createRuntime({ token, platform: platformClient({ baseUrl: platform.url, userId: USER, token }), runtimeVersion: '2.3.4' });
  await new Promise<void>((r) => runtime.server.listen(0, '127.0.0.1', r));
  cleanups.push(() => runtime.close());
  const base = `http://127.0.0.1:${(runtime.server.address() as AddressInfo).port}`;
  return { runtime, base, ws: base.replace('http', 'ws') };
}

function open(url: string): Promise<{ ws: WebSocket; next: () => Promise<any> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const queue: any[] = [];
    const waiters: ((m: any) => void)[] = [];
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      const w = waiters.shift();
      if (w) w(m);
      else queue.push(m);
    });
    ws.once('open', () => {
      cleanups.push(async () => ws.close());
      resolve({ ws, next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiters.push(r))) });
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** The frames of one streamed answer: its deltas, then the frame that ends it (`done` or `error`). */
async function throughLastFrame(socket: { next: () => Promise<any> }) {
  const frames: any[] = [];
  for (let f = await socket.next(); ; f = await socket.next()) {
    frames.push(f);
    if (f.type !== 'delta') return frames;
  }
}

describe('agent runtime', () => {
  it('accepts only its gateway token, as a Bearer header or ?token=', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    const { runtime, base } = await startRuntime(platform);
    await runtime.start();
    expect((await fetch(`${base}/health`)).status).toBe(401);
    expect((await fetch(`${base}/health`, { headers: { authorization: 'Bearer gw_someone-elses' } })).status).toBe(401);
    expect((await fetch(`${base}/health?token=nope`)).status).toBe(401);
    const ok = await fetch(`${base}/health`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'ok', runtimeVersion: '2.3.4' });
    expect((await fetch(`${base}/health?token=${TOKEN}`)).status).toBe(200);
    // The one route without the token says only that the process answers.
    const live = await fetch(`${base}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'alive' });
    expect((await fetch(`${base}/livez`, { method: 'POST' })).status).toBe(401);
  });

  it('says "starting" on /health until its state is loaded', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    const { runtime, base } = await startRuntime(platform);
    const before = await fetch(`${base}/health?token=${TOKEN}`);
    expect(before.status).toBe(503);
    expect(await before.json()).toMatchObject({ status: 'starting' });
    await runtime.start();
    expect((await fetch(`${base}/health?token=${TOKEN}`)).status).toBe(200);
  });

  it('reports live figures of its own process on /stats', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    const { runtime, base } = await startRuntime(platform);
    await runtime.start();
    const stats = (await (await fetch(`${base}/stats?token=${TOKEN}`)).json()) as any;
    expect(stats.status).toBe('running');
    expect(stats.uptimeMs).toBeGreaterThan(0);
    expect(stats.pids).toBeGreaterThanOrEqual(1);
    expect(stats.memory.usedBytes).toBeGreaterThan(1024 * 1024);
    expect(stats.memory.limitBytes).toBeGreaterThanOrEqual(stats.memory.usedBytes);
    expect(stats.cpuPercent).toBeGreaterThanOrEqual(0);
    // The request that asked for them is counted as traffic.
    expect(stats.network.rxBytes).toBeGreaterThan(0);
  });

  it('answers chat over the websocket through the platform model layer, with memory and history in the prompt', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    platform.agents.set('agt_a', agent('agt_a', { config: { systemPrompt: 'You book DJ gigs.' }, memory: { city: 'Bristol' } }));
    const { runtime, ws } = await startRuntime(platform);
    await runtime.start();
    const socket = await open(`${ws}/agents/agt_a?token=${TOKEN}`);
    expect(await socket.next()).toEqual({ type: 'ready', agentId: 'agt_a', runtimeVersion: '2.3.4' });
    socket.ws.send(JSON.stringify({ type: 'message', content: 'first?', id: 'm1' }));
    expect(await socket.next()).toMatchObject({ type: 'message', role: 'assistant', content: 'echo: first?', replyTo: 'm1', agentId: 'agt_a' });
    socket.ws.send('second?');
    expect(await socket.next()).toMatchObject({ type: 'message', content: 'echo: second?' });

    const [first, second] = platform.completions;
    expect(first!.agentId).toBe('agt_a');
    expect(first!.messages[0]!.role).toBe('system');
    expect(first!.messages[0]!.content).toContain('You book DJ gigs.');
    expect(first!.messages[0]!.content).toContain('city: "Bristol"');
    expect(second!.messages.slice(1)).toEqual([
      { role: 'user', content: 'first?' },
      { role: 'assistant', content: 'echo: first?' },
      { role: 'user', content: 'second?' },
    ]);
    expect(platform.reports.map((r) => r.messages.length)).toEqual([2, 2]);
    expect(platform.reports[0]!.responseMs).toBeGreaterThanOrEqual(0);
  });

  it('streams an answer over the websocket as delta frames, the first before the model wrote its last piece, then done', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    platform.agents.set('agt_a', agent('agt_a'));
    const { runtime, ws } = await startRuntime(platform);
    await runtime.start();
    const socket = await open(`${ws}/agents/agt_a?token=${TOKEN}`);
    await socket.next();
    let lastPieceHeld = true;
    let release!: () => void;
    platform.beforeLastPiece = () =>
      new Promise<void>((resolve) => {
        release = () => {
          lastPieceHeld = false;
          resolve();
        };
      });
    socket.ws.send(JSON.stringify({ type: 'message', content: 'hold the 14th', id: 'm1', stream: true }));
    const first = await socket.next();
    expect(first).toEqual({ type: 'delta', agentId: 'agt_a', text: 'echo:', replyTo: 'm1' });
    // Arrived while the model still held its last piece back: relayed as it came, not buffered.
    expect(lastPieceHeld).toBe(true);
    release();
    const frames = [first, ...(await throughLastFrame(socket))];
    expect(
      frames
        .filter((f) => f.type === 'delta')
        .map((f) => f.text)
        .join(''),
    ).toBe('echo: hold the 14th');
    expect(frames.at(-1)).toEqual({
      type: 'done',
      agentId: 'agt_a',
      message: { role: 'assistant', content: 'echo: hold the 14th' },
      usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
      replyTo: 'm1',
    });
    // Stored once, whole; and the next exchange has it as context.
    expect(platform.reports.map((r) => r.messages)).toEqual([
      [
        { role: 'user', content: 'hold the 14th' },
        { role: 'assistant', content: 'echo: hold the 14th' },
      ],
    ]);
    platform.beforeLastPiece = () => Promise.reject(new Error('provider gone'));
    socket.ws.send(JSON.stringify({ type: 'message', content: 'and the 15th?', id: 'm2', stream: true }));
    const failed = await throughLastFrame(socket);
    expect(failed[0]).toMatchObject({ type: 'delta', replyTo: 'm2' });
    expect(failed.at(-1)).toEqual({
      type: 'error',
      agentId: 'agt_a',
      code: 'MODEL_PROVIDER_ERROR',
      error: 'the model provider failed while streaming',
      replyTo: 'm2',
    });
    expect(platform.reports.at(-1)).toMatchObject({ messages: [{ role: 'user', content: 'and the 15th?' }], failed: true });
    expect(platform.completions.at(-1)!.messages.slice(1)).toEqual([
      { role: 'user', content: 'hold the 14th' },
      { role: 'assistant', content: 'echo: hold the 14th' },
      { role: 'user', content: 'and the 15th?' },
    ]);
  });

  it('POST /agents/<id>/chat with stream: true answers server-sent events; a refusal before the first piece stays a JSON error', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    platform.agents.set('agt_a', agent('agt_a'));
    const { runtime, base } = await startRuntime(platform);
    await runtime.start();
    const chat = (content: string) =>
      fetch(`${base}/agents/agt_a/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content, stream: true }),
      });
    const res = await chat('over http');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((f) => ({ event: /^event: (.*)$/m.exec(f)![1], data: JSON.parse(/^data: (.*)$/m.exec(f)![1]!) }));
    expect(frames.filter((f) => f.event === 'delta').map((f) => f.data.content)).toEqual(['echo:', ' over', ' http']);
    expect(frames.at(-1)).toEqual({
      event: 'done',
      data: { content: 'echo: over http', usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } },
    });
    platform.modelConfigured = false;
    const refused = await chat('anyone?');
    expect(refused.status).toBe(502);
    expect(await refused.json()).toEqual({ error: 'no model provider is configured', code: 'MODEL_NOT_CONFIGURED' });
  });

  it('a restarted runtime continues the conversation it loaded from the platform', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    platform.agents.set('agt_a', agent('agt_a'));
    const first = await startRuntime(platform);
    await first.runtime.start();
    const s1 = await open(`${first.ws}/agents/agt_a?token=${TOKEN}`);
    await s1.next();
    s1.ws.send('remember the 14th');
    await s1.next();
    await first.runtime.close();

    const second = await startRuntime(platform);
    await second.runtime.start();
    const s2 = await open(`${second.ws}/agents/agt_a?token=${TOKEN}`);
    await s2.next();
    s2.ws.send('which date?');
    await s2.next();
    expect(platform.completions.at(-1)!.messages.slice(1)).toEqual([
      { role: 'user', content: 'remember the 14th' },
      { role: 'assistant', content: 'echo: remember the 14th' },
      { role: 'user', content: 'which date?' },
    ]);
  });

  it('sends a clear error over the socket while no model provider is configured', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    platform.modelConfigured = false;
    platform.agents.set('agt_a', agent('agt_a'));
    const { runtime, ws } = await startRuntime(platform);
    await runtime.start();
    const socket = await open(`${ws}/agents/agt_a?token=${TOKEN}`);
    await socket.next();
    socket.ws.send(JSON.stringify({ type: 'message', content: 'hello', id: 'x' }));
    expect(await socket.next()).toEqual({
      type: 'error',
      agentId: 'agt_a',
      code: 'MODEL_NOT_CONFIGURED',
      error: 'no model provider is configured',
      replyTo: 'x',
    });
    expect(platform.reports).toEqual([{ agentId: 'agt_a', messages: [{ role: 'user', content: 'hello' }], failed: true }]);
  });

  it('refuses websocket upgrades without the token or for an unknown agent, and fetches an agent added after start', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    const { runtime, ws } = await startRuntime(platform);
    await runtime.start();
    await expect(open(`${ws}/agents/agt_late`)).rejects.toThrow('401');
    await expect(open(`${ws}/agents/agt_late?token=wrong`)).rejects.toThrow('401');
    await expect(open(`${ws}/agents/agt_late?token=${TOKEN}`)).rejects.toThrow('404');
    platform.agents.set('agt_late', agent('agt_late'));
    const socket = await open(`${ws}/agents/agt_late?token=${TOKEN}`);
    expect((await socket.next()).type).toBe('ready');
  });

  it('takes the websocket token from an Authorization header or the bearer.<token> subprotocol, selecting agent-runtime', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    const { runtime, ws } = await startRuntime(platform);
    await runtime.start();
    platform.agents.set('agt_tok', agent('agt_tok'));
    const connect = (protocols: string[], headers: Record<string, string> = {}) =>
      new Promise<WebSocket>((resolve, reject) => {
        const socket = new WebSocket(`${ws}/agents/agt_tok`, protocols, { headers });
        socket.once('open', () => resolve(socket));
        socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
        socket.once('error', reject);
      });
    const viaProtocol = await connect(['agent-runtime', `bearer.${TOKEN}`]);
    expect(viaProtocol.protocol).toBe('agent-runtime');
    viaProtocol.close();
    const viaHeader = await connect([], { authorization: `Bearer ${TOKEN}` });
    viaHeader.close();
    await expect(connect(['agent-runtime', 'bearer.gw_wrong'])).rejects.toThrow('401');
  });

  it('answers 502 when the platform cannot be reached for an agent it has not loaded, and keeps serving', async () => {
    const platform = await fakePlatform();
    const { runtime, base } = await startRuntime(platform);
    await runtime.start();
    await platform.close();
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const res = await fetch(`${base}/agents/agt_unseen/chat`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ content: 'hi' }),
      signal: AbortSignal.timeout(5000),
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { code: string }).code).toBe('PLATFORM_UNREACHABLE');
    const health = await fetch(`${base}/health`, { headers });
    expect(health.status).toBe(200);
  });

  it('refuses a memory push whose body is JSON but not an object', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    platform.agents.set('agt_m', agent('agt_m', { memory: { kept: 'yes' } }));
    const { runtime, base } = await startRuntime(platform);
    await runtime.start();
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    for (const body of ['null', '[]', '"text"', '7']) {
      const res = await fetch(`${base}/agents/agt_m/memory`, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) });
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('BAD_CHANGE');
    }
    const set = await fetch(`${base}/agents/agt_m/memory`, { method: 'POST', headers, body: JSON.stringify({ set: { added: 1 } }) });
    expect(((await set.json()) as { keys: number }).keys).toBe(2);
  });

  it('reloads configuration on POST /reload', async () => {
    const platform = await fakePlatform();
    cleanups.push(() => platform.close());
    platform.agents.set('agt_a', agent('agt_a'));
    const { runtime, base, ws } = await startRuntime(platform);
    await runtime.start();
    platform.agents.get('agt_a')!.config = { systemPrompt: 'New persona.' };
    const res = await fetch(`${base}/reload`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await res.json()).toEqual({ success: true, agents: 1 });
    const socket = await open(`${ws}/agents/agt_a?token=${TOKEN}`);
    await socket.next();
    socket.ws.send('hi');
    await socket.next();
    expect(platform.completions[0]!.messages[0]!.content).toBe('New persona.');
  });
});
