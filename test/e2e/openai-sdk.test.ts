import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI, { APIError, AuthenticationError, PermissionDeniedError, RateLimitError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerApi, signUpVerified, startLocalStack, stopLocalStack, until, type LocalStack } from '../helpers/local-stack';
import { fakeAnswerTo, startFakeModelServer, type FakeModelServer } from '../helpers/fake-model-server';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

/**
 * The OpenAI-compatible API driven by the official `openai` SDK, unmodified, with only its `baseURL`
 * at the local stack (`npm start`) and an `sk_` API key: the model list, plain and streamed
 * completions from the fake model provider, a hosted agent as the model, and the refusals an SDK
 * user meets (a model outside the plan, a budget stop, the rate limit) as the SDK's typed errors.
 */

const RATE_LIMIT = 12;

describe('the openai SDK against the local stack', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-openai-e2e-'));
  let stack: LocalStack | undefined;
  let base = '';
  let model: FakeModelServer;
  const admin = { userId: '', token: '', key: '' };
  const member = { userId: '', token: '', key: '' };
  let agentId = '';

  const adminApi = bearerApi(
    () => base,
    () => admin.token,
  );
  const memberApi = bearerApi(
    () => base,
    () => member.token,
  );
  /** The SDK as a user configures it: the platform's /v1 and an API key; no retries, so a refusal is seen as it is. */
  const sdk = (apiKey: string) => new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0 });

  async function apiKeyOf(api: typeof adminApi, name: string) {
    const created = await api('POST', '/api/keys', { name });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^sk_/);
    return created.body.key as string;
  }

  /** A paid `label` plan through the local card processor, as a user subscribes. */
  async function subscribeToLabel(token: string) {
    const checkout = await fetch(`${base}/api/card/checkout?plan=label`, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });
    expect([302, 303]).toContain(checkout.status);
    const paid = await fetch(checkout.headers.get('location')!, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
  }

  beforeAll(async () => {
    model = await startFakeModelServer();
    stack = startLocalStack({
      DATA_DIR: dataDir,
      JWT_SECRET: TEST_JWT_SECRET,
      ADMIN_EMAILS: 'admin@example.com',
      CARD_MODE: 'local',
      MODEL_API_BASE_URL: model.baseUrl,
      MODEL_API_KEY: 'sk-e2e-provider-key',
      PROVISION_HEALTH_INTERVAL_MS: '250',
      RATE_LIMITS: JSON.stringify({ modelApi: { limit: RATE_LIMIT } }),
    });
    base = await stack.ready;
    Object.assign(admin, await signUpVerified(base, dataDir, 'admin@example.com'));
    Object.assign(member, await signUpVerified(base, dataDir, 'member@example.com'));
    admin.key = await apiKeyOf(adminApi, 'openai sdk');
    member.key = await apiKeyOf(memberApi, 'openai sdk');
    await subscribeToLabel(member.token);
    const provisioned = await adminApi('POST', '/api/agents/provision', { name: 'Tour desk' });
    expect(provisioned.status).toBe(201);
    agentId = provisioned.body.agent.id;
    await until(async () => ((await adminApi('GET', `/api/agents/${agentId}`)).body.agent.status === 'running' ? true : undefined), 'the agent to run', 60_000);
  }, 150_000);

  afterAll(async () => {
    await stopLocalStack(stack, dataDir);
    await model?.close();
  });

  it('models.list: the plan’s models a provider serves, and the caller’s agents as agent/<id>', async () => {
    const memberModels = [];
    for await (const m of sdk(member.key).models.list()) memberModels.push(m);
    const ids = memberModels.map((m) => m.id);
    expect(ids).toContain('openai/gpt-4o-mini');
    // A `solo` model is not the `label` plan's.
    expect(ids).not.toContain('anthropic/claude-3-5-haiku');
    expect(ids.some((id) => id.startsWith('agent/'))).toBe(false);
    expect(memberModels[0]).toMatchObject({ object: 'model', owned_by: 'openai' });

    const adminModels = [];
    for await (const m of sdk(admin.key).models.list()) adminModels.push(m);
    expect(adminModels.find((m) => m.id === `agent/${agentId}`)).toMatchObject({ object: 'model', owned_by: 'agent', name: 'Tour desk' });
    expect(adminModels.map((m) => m.id)).toContain('anthropic/claude-3-5-haiku');
  });

  it('chat.completions.create: an answer from the model layer with its usage, the settings passed to the provider', async () => {
    const before = model.requests.length;
    const out = await sdk(member.key).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are concise.' },
        { role: 'user', content: 'Name one venue in Leeds.' },
      ],
      temperature: 0.3,
      top_p: 0.9,
      max_completion_tokens: 64,
      stop: ['\n\n'],
    });
    expect(out.object).toBe('chat.completion');
    expect(out.model).toBe('openai/gpt-4o-mini');
    expect(out.choices[0]).toMatchObject({
      index: 0,
      finish_reason: 'stop',
      message: { role: 'assistant', content: fakeAnswerTo('Name one venue in Leeds.') },
    });
    expect(out.usage).toEqual({ prompt_tokens: 20, completion_tokens: fakeAnswerTo('Name one venue in Leeds.').length, total_tokens: expect.any(Number) });
    const sent = model.requests.slice(before).find((r) => r.path.endsWith('/chat/completions'))!;
    expect(sent.authorization).toBe('Bearer sk-e2e-provider-key');
    expect(sent.body).toMatchObject({ model: 'openai/gpt-4o-mini', temperature: 0.3, top_p: 0.9, max_tokens: 64, stop: ['\n\n'] });
    // Metered like every model call: the account's usage shows it.
    const usage = await memberApi('POST', '/api/billing', { action: 'get-usage' });
    expect(usage.status).toBe(200);
    expect(JSON.stringify(usage.body)).toContain('openai/gpt-4o-mini');
  });

  it('chat.completions.create with stream: the SDK’s own parser yields the deltas, then the usage', async () => {
    const stream = await sdk(member.key).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Stream the set list.' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe(fakeAnswerTo('Stream the set list.'));
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: text.length });
  });

  it('tools: the model’s call of a client function comes back as tool_calls, and its result continues the conversation', async () => {
    model.toolCall = { name: 'find_venue', input: { city: 'Leeds' } };
    try {
      const client = sdk(member.key);
      const tools = [
        {
          type: 'function' as const,
          function: { name: 'find_venue', description: 'Find a venue in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ];
      const question = { role: 'user' as const, content: 'Find me a venue in Leeds.' };
      const first = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [question], tools, tool_choice: 'auto' });
      expect(first.choices[0]!.finish_reason).toBe('tool_calls');
      const call = first.choices[0]!.message.tool_calls![0]!;
      expect(call).toMatchObject({ type: 'function', function: { name: 'find_venue' } });
      expect(JSON.parse((call as { function: { arguments: string } }).function.arguments)).toEqual({ city: 'Leeds' });
      expect(model.requests.at(-1)!.body.tools).toHaveLength(1);

      const second = await client.chat.completions.create({
        model: 'openai/gpt-4o-mini',
        messages: [question, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'Brudenell Social Club' }],
        tools,
      });
      expect(second.choices[0]!.finish_reason).toBe('stop');
      expect(model.requests.at(-1)!.body.messages.some((m) => m.role === 'tool')).toBe(true);
    } finally {
      model.toolCall = undefined;
    }
  });

  it('model agent/<id>: the hosted agent answers, and the exchange is stored in its history', async () => {
    const out = await sdk(admin.key).chat.completions.create({
      model: `agent/${agentId}`,
      messages: [{ role: 'user', content: 'Which dates are open in June?' }],
    });
    expect(out.model).toBe(`agent/${agentId}`);
    expect(out.choices[0]!.message.content).toBe(fakeAnswerTo('Which dates are open in June?'));
    // The agent's runtime called the model with its own instructions before the user's message.
    const sent = model.requests.at(-1)!;
    expect(sent.body.messages[0]!.role).toBe('system');
    const history = await adminApi('GET', `/api/chat?agentId=${agentId}&limit=10`);
    expect(history.status).toBe(200);
    const contents = history.body.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`);
    expect(contents).toEqual(expect.arrayContaining(['user: Which dates are open in June?', `assistant: ${fakeAnswerTo('Which dates are open in June?')}`]));
  }, 60_000);

  it('model agent/<id> streamed: the agent’s answer as chunks, stored once', async () => {
    const stream = await sdk(admin.key).chat.completions.create({
      model: `agent/${agentId}`,
      messages: [{ role: 'user', content: 'And in July?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(fakeAnswerTo('And in July?'));
    expect(usage?.total_tokens).toBeGreaterThan(0);
    const history = await adminApi('GET', `/api/chat?agentId=${agentId}&limit=50`);
    expect(history.body.messages.filter((m: { content: string }) => m.content === 'And in July?')).toHaveLength(1);
  }, 60_000);

  it('another account’s agent is no model of the caller: 404 in OpenAI’s shape', async () => {
    const refused = await sdk(member.key)
      .chat.completions.create({ model: `agent/${agentId}`, messages: [{ role: 'user', content: 'hello' }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(APIError);
    expect((refused as APIError).status).toBe(404);
  });

  it('a model outside the plan: 403 in OpenAI’s shape, the SDK’s PermissionDeniedError', async () => {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic/claude-3-5-haiku', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: {
        message: expect.stringContaining('anthropic/claude-3-5-haiku'),
        type: 'permission_error',
        code: 'model_restricted',
        param: 'model',
        allowedModels: expect.arrayContaining(['openai/gpt-4o-mini']),
      },
    });
    const refused = await sdk(member.key)
      .chat.completions.create({ model: 'anthropic/claude-3-5-haiku', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PermissionDeniedError);
    expect((refused as PermissionDeniedError).code).toBe('model_restricted');
  });

  it('a bad key: 401, the SDK’s AuthenticationError', async () => {
    const refused = await sdk('sk_not-a-key')
      .models.list()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect((refused as AuthenticationError).error).toMatchObject({ type: 'authentication_error', code: 'token_invalid' });
  });

  it('at the monthly spending cap: 402 budget_exceeded', async () => {
    expect((await memberApi('PUT', '/api/budget', { monthlyCapUsd: 0.000001 })).status).toBe(200);
    const client = sdk(member.key);
    const ask = () => client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'One more?' }] });
    // The first call may still be admitted (spend under the cap); its spend passes the cap, and the next is refused before the provider is asked.
    const first = await ask().then(
      () => 'answered' as const,
      (e: unknown) => e,
    );
    const before = model.requests.length;
    const refused = first === 'answered' ? await ask().catch((e: unknown) => e) : first;
    expect(refused).toBeInstanceOf(APIError);
    expect((refused as APIError).status).toBe(402);
    expect((refused as APIError).code).toBe('budget_exceeded');
    expect((refused as APIError).type).toBe('insufficient_quota');
    expect(model.requests.length).toBe(before);
  });

  it(`past ${RATE_LIMIT} calls a minute: 429 with Retry-After, the SDK’s RateLimitError`, async () => {
    const caller = await signUpVerified(base, dataDir, 'busy@example.com');
    const key = await apiKeyOf(
      bearerApi(
        () => base,
        () => caller.token,
      ),
      'busy',
    );
    const client = sdk(key);
    for (let i = 0; i < RATE_LIMIT; i++) await client.models.list();
    const refused = await client.models.list().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitError);
    expect(Number((refused as RateLimitError).headers?.get('retry-after'))).toBeGreaterThan(0);
    expect((refused as RateLimitError).error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
  });
});
