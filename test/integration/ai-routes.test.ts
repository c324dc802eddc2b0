import { describe, expect, it } from 'vitest';
import { catalogue } from '#domain/models/catalogue';
import { call, testSession, type TestSession } from '../helpers/api';
import { fakeAnswerTo, fakePromptTokens } from '../helpers/fake-model-server';
import { useFakeModelProviders } from '../helpers/model-providers';
import { readWhileModelIsSlow } from '../helpers/sse-timing';
import { startPlatform, subscribe } from './agents-helpers';

const bed = useFakeModelProviders();

async function subscriber(plan: string | null, status = 'active', opts: { admin?: boolean } = {}) {
  const s = await testSession(opts);
  if (plan) await subscribe(s.userId, plan, status);
  return s;
}

const chat = (session: TestSession, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call('POST', '/api/ai/chat', { session, body: { messages: [{ role: 'user', content: 'hello' }], ...body }, headers });

/** The SSE frames of a body, as {event, data}. */
const framesOf = (text: string) =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((f) => ({ event: /^event: (.*)$/m.exec(f)![1]!, data: JSON.parse(/^data: (.*)$/m.exec(f)![1]!) }));

const networkOnly = catalogue().models.find((m) => m.minPlan === 'network')!.id;

describe('AI routes: catalogue, health, selection, estimates', () => {
  it('lists every catalogue model as available through the aggregator, with counts per provider', async () => {
    const res = await call('GET', '/api/ai/models');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(catalogue().models.length);
    expect(res.body.models.every((m: { available: boolean }) => m.available)).toBe(true);
    expect(res.body.openai).toBe(2);
    expect(res.body.anthropic).toBe(3);
    expect(res.body.models[0]).toEqual(expect.objectContaining({ id: 'openai/gpt-4o-mini', inputCost: 0.15, outputCost: 0.6, contextWindow: 128000 }));
    const one = await call('GET', '/api/ai/models/anthropic');
    expect(one.body).toMatchObject({ provider: 'anthropic', count: 3 });
    expect((await call('GET', '/api/ai/models/nobody')).status).toBe(404);
  });

  it('without any provider, models are unavailable, health is 503 and chat finds no model', async () => {
    const session = await subscriber('solo');
    bed.apply({ MODEL_API_BASE_URL: undefined, ANTHROPIC_API_KEY: undefined });
    try {
      const models = await call('GET', '/api/ai/models');
      expect(models.body.models.some((m: { available: boolean }) => m.available)).toBe(false);
      const health = await call('GET', '/api/ai/health');
      expect(health.status).toBe(503);
      expect(health.body).toEqual({ status: 'error', error: expect.any(String), code: 'AI_NOT_CONFIGURED' });
      const res = await chat(session, {});
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NO_MODELS');
    } finally {
      bed.apply({ MODEL_API_BASE_URL: bed.model.baseUrl, ANTHROPIC_API_KEY: 'test-anthropic-key' });
    }
  });

  it('health probes each configured provider', async () => {
    const res = await call('GET', '/api/ai/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'healthy', providers: { anthropic: true, 'openai-compatible': true } });
  });

  it('selects the cheapest available model of the task, limited to the plan with a session', async () => {
    const anon = await call('POST', '/api/ai/models/select', { body: {} });
    expect(anon.body).toMatchObject({ model: { id: 'mistral/mistral-small', provider: 'mistral' }, taskType: 'general' });
    expect((await call('POST', '/api/ai/models/select', { body: { taskType: 'reasoning' } })).body.model.id).toBe('google/gemini-2.5-pro');
    const label = await subscriber('label');
    expect((await call('POST', '/api/ai/models/select', { session: label, body: { taskType: 'general' } })).body.model.id).toBe('google/gemini-2.0-flash');
    expect((await call('POST', '/api/ai/models/select', { session: label, body: { taskType: 'reasoning' } })).status).toBe(404);
    expect((await call('POST', '/api/ai/models/select', { body: { taskType: 'poetry' } })).status).toBe(404);
  });

  it('estimates cost in USD from the per-million prices; 400 for a missing field, 404 for an unknown model', async () => {
    const res = await call('POST', '/api/ai/estimate-cost', { body: { model: 'openai/gpt-4o-mini', inputTokens: 1_000_000, outputTokens: 500_000 } });
    expect(res.body).toMatchObject({ model: 'openai/gpt-4o-mini', estimatedCost: 0.45, currency: 'USD' });
    expect((await call('POST', '/api/ai/estimate-cost', { body: { model: 'openai/gpt-4o-mini', inputTokens: 10 } })).status).toBe(400);
    expect((await call('POST', '/api/ai/estimate-cost', { body: { model: 'acme/none', inputTokens: 1, outputTokens: 1 } })).status).toBe(404);
  });
});

describe('AI routes: chat', () => {
  it.each([
    ['label', 2],
    ['solo', 4],
    ['collective', 6],
  ])('%s gets 403 MODEL_RESTRICTED with its %i models for a network-only model', async (plan, count) => {
    const res = await chat(await subscriber(plan), { model: networkOnly });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ success: false, code: 'MODEL_RESTRICTED' });
    expect(res.body.allowedModels).toHaveLength(count);
  });

  it('network and admin accounts chat with a network-only model', async () => {
    for (const session of [await subscriber('network'), await subscriber(null, 'active', { admin: true })]) {
      const res = await chat(session, { model: networkOnly, messages: [{ role: 'user', content: `hi ${session.userId}` }] });
      expect(res.status).toBe(200);
      expect(res.body.message).toEqual({ role: 'assistant', content: fakeAnswerTo(`hi ${session.userId}`) });
    }
  });

  it("answers with the fake's reply and token counts", async () => {
    const res = await chat(await subscriber('solo'), { model: 'openai/gpt-4o-mini', temperature: 0.3, max_tokens: 64 });
    expect(res.status).toBe(200);
    const completionTokens = fakeAnswerTo('hello').length;
    expect(res.body).toMatchObject({
      model: 'openai/gpt-4o-mini',
      provider: 'openai',
      message: { role: 'assistant', content: fakeAnswerTo('hello') },
      usage: { promptTokens: fakePromptTokens(1), completionTokens, totalTokens: fakePromptTokens(1) + completionTokens },
    });
  });

  it('forged plan, subscription and admin headers grant nothing', async () => {
    const forged = { 'x-user-plan': 'network', 'x-card-subscription-id': 'sub_forged', 'x-user-email': 'admin@example.com' };
    const none = await chat(await subscriber(null), {}, forged);
    expect(none.status).toBe(402);
    expect(none.body).toEqual({ success: false, error: expect.any(String), code: 'PLAN_REQUIRED' });
    const lapsed = await chat(await subscriber('network', 'canceled'), {}, forged);
    expect(lapsed.status).toBe(402);
    expect(lapsed.body.code).toBe('SUBSCRIPTION_REQUIRED');
    const solo = await subscriber('solo');
    for (const [name, value] of Object.entries(forged)) {
      const res = await chat(solo, { model: networkOnly }, { [name]: value });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('HEADER_MISMATCH');
    }
    expect((await chat(solo, {}, { 'x-user-plan': 'solo', 'x-user-email': solo.email })).status).toBe(200);
  });

  it('refuses empty messages, a prompt over the context window, and maps a provider failure to 500', async () => {
    const solo = await subscriber('solo');
    expect((await chat(solo, { messages: [] })).status).toBe(400);
    const long = 'x'.repeat(100_000);
    const over = await chat(solo, {
      model: 'mistral/mistral-small',
      messages: [
        { role: 'user', content: long },
        { role: 'user', content: long },
      ],
    });
    expect(over.status).toBe(400);
    expect(over.body.code).toBe('CONTEXT_WINDOW_EXCEEDED');
    bed.model.failWith = 503;
    try {
      const res = await chat(solo, {});
      expect(res.status).toBe(500);
      expect(res.body.code).toBe('PROVIDER_ERROR');
    } finally {
      bed.model.failWith = undefined;
    }
  });

  it('streams as server-sent events, usage in the last event (buffered behind a non-streaming transport)', async () => {
    const res = await chat(await subscriber('solo'), { messages: [{ role: 'user', content: 'stream please' }] }, { accept: 'text/event-stream' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const frames = framesOf(res.text!);
    expect(frames[0]!.event).toBe('start');
    expect(
      frames
        .filter((f) => f.event === 'delta')
        .map((f) => f.data.content)
        .join(''),
    ).toBe(fakeAnswerTo('stream please'));
    expect(frames.at(-1)).toMatchObject({ event: 'done', data: { usage: { completionTokens: fakeAnswerTo('stream please').length } } });
  });

  it('the local server sends the first event over HTTP before the model sent its last chunk', async () => {
    const session = await subscriber('solo');
    const platform = await startPlatform();
    try {
      const { res, frames, firstDeltaAt, lastChunkSentAt } = await readWhileModelIsSlow(bed.model, `${platform.url}/api/ai/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'over http' }], model: 'anthropic/claude-3-5-haiku' }),
      });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(res.headers.get('transfer-encoding')).toBe('chunked');
      expect(firstDeltaAt).toBeDefined();
      expect(lastChunkSentAt).toBeDefined();
      expect(firstDeltaAt!).toBeLessThan(lastChunkSentAt!);
      expect(
        frames
          .filter((f) => f.event === 'delta')
          .map((f) => f.data.content)
          .join(''),
      ).toBe(fakeAnswerTo('over http'));
      expect(frames.at(-1)!.event).toBe('done');
    } finally {
      await platform.close();
    }
  });
});

describe('AI routes: usage', () => {
  it('get-usage reports the tokens and cost of the period per model and per agent', async () => {
    const session = await subscriber('solo');
    await chat(session, { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'one' }] });
    await chat(session, { model: 'anthropic/claude-3-5-haiku', messages: [{ role: 'user', content: 'two' }] });
    const res = await call('POST', '/api/billing', { session, body: { action: 'get-usage' } });
    expect(res.status).toBe(200);
    const u = res.body.usage;
    const completion = fakeAnswerTo('one').length + fakeAnswerTo('two').length;
    expect(u.tokens).toEqual({ prompt: 2 * fakePromptTokens(1), completion, total: 2 * fakePromptTokens(1) + completion });
    expect(u.models.map((m: { model: string }) => m.model).sort()).toEqual(['anthropic/claude-3-5-haiku', 'openai/gpt-4o-mini']);
    expect(u.agents).toEqual([expect.objectContaining({ agentId: null, calls: 2, fallbackCalls: 0, totalTokens: u.tokens.total })]);
    expect(u.models.map((m: { fallbackCalls: number }) => m.fallbackCalls)).toEqual([0, 0]);
    expect(u.costUsd).toBeGreaterThan(0);
    expect(u.allowance.usedCredits).toBeGreaterThan(0);
    // Per day and model (the console's usage chart): today's two calls, one per model, adding up to the period.
    const today = new Date().toISOString().slice(0, 10);
    expect(u.days.map((d: { day: string; model: string; calls: number }) => [d.day, d.model, d.calls])).toEqual([
      [today, 'anthropic/claude-3-5-haiku', 1],
      [today, 'openai/gpt-4o-mini', 1],
    ]);
    expect(u.days.reduce((sum: number, d: { totalTokens: number }) => sum + d.totalTokens, 0)).toBe(u.tokens.total);
  });
});
