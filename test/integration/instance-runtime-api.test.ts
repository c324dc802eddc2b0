import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { createAgent } from '#data/agents';
import { ensureInstance, gatewayToken } from '#data/instances';
import { writeAgentMemory } from '#data/memory';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { accountSession, call } from '../helpers/api';
import { fakeAnswerTo, startFakeModelServer, type FakeModelServer } from '../helpers/fake-model-server';
import { deltaText, sseFramesOf } from '../helpers/sse-timing';
import { subscribe } from './agents-helpers';

/** The platform side of the runtime: routes an instance calls with its gateway token. */

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeModelServer();
});
afterEach(() => {
  model.failWith = undefined;
  reloadConfig({ MODEL_API_BASE_URL: undefined, MODEL_API_KEY: undefined });
});
afterAll(() => model.close());

async function account(opts: { plan?: string; admin?: boolean; model?: string } = {}) {
  const user = await accountSession({ admin: opts.admin, userId: opts.admin ? `u_admin_rt_${Date.now()}` : undefined });
  if (opts.plan) await subscribe(user.userId, opts.plan);
  const agent = await createAgent(
    user.userId,
    { name: 'Runtime bot', model: opts.model ?? 'openai/gpt-4o-mini', config: { systemPrompt: 'Be kind.' }, source: 'api' },
    10,
  );
  await ensureInstance(user.userId, { ownerEmail: user.email, image: 'img', runtimeVersion: '1.2.3', jobOwner: 'test' });
  return { user, agentId: agent.id, token: await gatewayToken(user.userId) };
}

const base = (userId: string) => `/api/instance/${userId}/runtime`;
const ask = (userId: string, token: string, agentId: string, content = 'Is the 14th free?') =>
  call('POST', `${base(userId)}/chat/completions`, { bearer: token, body: { agentId, messages: [{ role: 'user', content }] } });

describe('runtime routes', () => {
  it("accept only the account's own gateway token", async () => {
    const a = await account({ plan: 'solo' });
    const b = await account({ plan: 'solo' });
    const paths: [string, string, unknown?][] = [
      ['GET', `${base(a.user.userId)}/state`],
      ['POST', `${base(a.user.userId)}/messages`, { agentId: a.agentId, messages: [{ role: 'user', content: 'x' }] }],
      ['POST', `${base(a.user.userId)}/chat/completions`, { agentId: a.agentId, messages: [{ role: 'user', content: 'x' }] }],
    ];
    for (const [method, path, body] of paths) {
      for (const opts of [{}, { bearer: 'gw_forged' }, { bearer: b.token }, { bearer: a.user.token }, { session: a.user }]) {
        const res = await call(method, path, { ...opts, body });
        expect({ path, status: res.status, code: res.body?.code }).toEqual({ path, status: 401, code: 'TOKEN_INVALID' });
      }
    }
  });

  it('GET state delivers each agent with its configuration, memory and history', async () => {
    const { user, agentId, token } = await account({ plan: 'solo' });
    await writeAgentMemory(user.userId, agentId, [{ key: 'venue', encoded: '"The Fleece"', bytes: 12 }]);
    await call('POST', `${base(user.userId)}/messages`, {
      bearer: token,
      body: {
        agentId,
        messages: [
          { role: 'user', content: 'one' },
          { role: 'assistant', content: 'two' },
        ],
      },
    });
    const res = await call('GET', `${base(user.userId)}/state`, { bearer: token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ userId: user.userId, runtimeVersion: '1.2.3' });
    expect(res.body.agents).toHaveLength(1);
    expect(res.body.agents[0]).toMatchObject({
      id: agentId,
      name: 'Runtime bot',
      model: 'openai/gpt-4o-mini',
      config: { systemPrompt: 'Be kind.' },
      memory: { venue: 'The Fleece' },
    });
    expect(res.body.agents[0].messages.map((m: { content: string }) => m.content)).toEqual(['one', 'two']);
    expect((await call('GET', `${base(user.userId)}/state?agentId=agt_unknown`, { bearer: token })).body.agents).toEqual([]);
  });

  it("POST messages refuses an agent that is not the account's", async () => {
    const a = await account({ plan: 'solo' });
    const b = await account({ plan: 'solo' });
    const res = await call('POST', `${base(a.user.userId)}/messages`, {
      bearer: a.token,
      body: { agentId: b.agentId, messages: [{ role: 'user', content: 'x' }] },
    });
    expect(res.status).toBe(404);
  });

  it('chat completions say plainly that no model provider is configured', async () => {
    const { user, agentId, token } = await account({ plan: 'solo' });
    const res = await ask(user.userId, token, agentId);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('MODEL_NOT_CONFIGURED');
    expect(res.body.error).toMatch(/no model provider is configured.*MODEL_API_BASE_URL/);
  });

  it("answer in the OpenAI format with the agent's model; the provider key stays on the platform", async () => {
    reloadConfig({ MODEL_API_BASE_URL: model.baseUrl, MODEL_API_KEY: 'sk-platform-only' });
    const { user, agentId, token } = await account({ plan: 'solo' });
    const res = await ask(user.userId, token, agentId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'chat.completion',
      model: 'openai/gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: fakeAnswerTo('Is the 14th free?') } }],
    });
    expect(res.body.usage.total_tokens).toBeGreaterThan(0);
    expect(res.text).not.toContain('sk-platform-only');
    expect(model.requests.at(-1)!.authorization).toBe('Bearer sk-platform-only');
    // Metered like every model call: the account, the agent and the model, with the provider's counts.
    const usage = await tenant(user.userId).queryAll<Record<string, unknown>>(keys.modelUsagePrefix);
    expect(usage).toEqual([
      expect.objectContaining({
        agentId,
        model: 'openai/gpt-4o-mini',
        promptTokens: res.body.usage.prompt_tokens,
        completionTokens: res.body.usage.completion_tokens,
        calls: 1,
      }),
    ]);
  });

  it('with stream: true answer server-sent events, metered once; refusals before the stream keep their status', async () => {
    reloadConfig({ MODEL_API_BASE_URL: model.baseUrl });
    const { user, agentId, token } = await account({ plan: 'solo' });
    const streamed = (content: string) =>
      call('POST', `${base(user.userId)}/chat/completions`, { bearer: token, body: { agentId, messages: [{ role: 'user', content }], stream: true } });
    const res = await streamed('stream the dates');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const frames = sseFramesOf(res.text!);
    expect(deltaText(frames)).toBe(fakeAnswerTo('stream the dates'));
    expect(frames.at(-1)).toMatchObject({ event: 'done', data: { model: 'openai/gpt-4o-mini', usage: { total_tokens: expect.any(Number) } } });
    const usage = await tenant(user.userId).queryAll<Record<string, unknown>>(keys.modelUsagePrefix);
    expect(usage).toEqual([expect.objectContaining({ agentId, calls: 1, completionTokens: frames.at(-1)!.data.usage.completion_tokens })]);
    model.failWith = 500;
    const failed = await streamed('and now?');
    expect(failed.status).toBe(502);
    expect(failed.body.code).toBe('MODEL_PROVIDER_ERROR');
  });

  it('are plan-gated: no subscription → 402, a model outside the plan → 403, admins pass', async () => {
    reloadConfig({ MODEL_API_BASE_URL: model.baseUrl });
    const lapsed = await account();
    expect((await ask(lapsed.user.userId, lapsed.token, lapsed.agentId)).body.code).toBe('PLAN_REQUIRED');
    const label = await account({ plan: 'label', model: 'anthropic/claude-3-5-haiku' });
    const restricted = await ask(label.user.userId, label.token, label.agentId);
    expect(restricted.status).toBe(403);
    expect(restricted.body).toMatchObject({ code: 'MODEL_RESTRICTED' });
    expect(restricted.body.allowedModels).not.toContain('anthropic/claude-3-5-haiku');
    const admin = await account({ admin: true, model: 'anthropic/claude-3-5-haiku' });
    expect((await ask(admin.user.userId, admin.token, admin.agentId)).status).toBe(200);
  });

  it('a provider failure is a 502, never a 500', async () => {
    reloadConfig({ MODEL_API_BASE_URL: model.baseUrl });
    model.failWith = 500;
    const { user, agentId, token } = await account({ plan: 'solo' });
    const res = await ask(user.userId, token, agentId);
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('MODEL_PROVIDER_ERROR');
    reloadConfig({ MODEL_API_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect((await ask(user.userId, token, agentId)).status).toBe(502);
  });
});

describe('agent-to-agent messages', () => {
  const send = (userId: string, token: string, body: Record<string, unknown>) => call('POST', `${base(userId)}/a2a`, { bearer: token, body });

  it('count against the plan limit per day, race-free: concurrent sends past it get 429 with current and limit', async () => {
    const { user, agentId, token } = await account({ plan: 'label' });
    const other = await createAgent(user.userId, { name: 'Second bot', model: 'openai/gpt-4o-mini', config: {}, source: 'api' }, 10);
    const ok = await send(user.userId, token, { fromAgentId: agentId, toAgentId: other.id, message: 'the venue confirmed' });
    expect(ok.status).toBe(200);
    expect(ok.body.usage).toEqual({ today: 1, limit: 100 });
    const history = await call('GET', `/api/agents/${other.id}/messages`, { bearer: user.token });
    expect(history.body.messages[0].content).toContain('the venue confirmed');

    await tenant(user.userId).update(keys.a2aDay(user.userId, new Date().toISOString().slice(0, 10)), {
      expression: 'SET #c = :c',
      names: { '#c': 'count' },
      values: { ':c': 97 },
    });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => send(user.userId, token, { fromAgentId: agentId, toAgentId: other.id, message: `m${i}` })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(5);
    for (const r of refused) expect(r.body).toMatchObject({ code: 'A2A_LIMIT_REACHED', current: 100, limit: 100 });

    const usage = await call('POST', '/api/billing', { bearer: user.token, body: { action: 'get-usage' } });
    expect(usage.body.usage.a2aMessages).toBe(100);
    expect(usage.body.usage.agents).toEqual([expect.objectContaining({ agentId, a2aMessages: 4 })]);
  });

  it("refuse another account's agent and an account without a subscription", async () => {
    const a = await account({ plan: 'solo' });
    const b = await account({ plan: 'solo' });
    expect((await send(a.user.userId, a.token, { fromAgentId: a.agentId, toAgentId: b.agentId, message: 'x' })).status).toBe(404);
    const lapsed = await account();
    const second = await createAgent(lapsed.user.userId, { name: 'Other', model: 'openai/gpt-4o-mini', config: {}, source: 'api' }, 10);
    expect((await send(lapsed.user.userId, lapsed.token, { fromAgentId: lapsed.agentId, toAgentId: second.id, message: 'x' })).status).toBe(402);
  });
});
