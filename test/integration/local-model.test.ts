import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_MODEL_ID, catalogue } from '#domain/models/catalogue';
import { localModelConfig, reloadConfig, validateAllSettings } from '#platform/config';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { localModelSettings } from '#local/model-server';
import { call, type TestSession } from '../helpers/api';
import { fakeAnswerTo, startFakeModelServer } from '../helpers/fake-model-server';
import { deltaText, sseFramesOf } from '../helpers/sse-timing';
import { runningAgent, subscribe, useAgentsTestBed } from './agents-helpers';
import { accountSession } from '../helpers/api';

/**
 * The local stack's keyless models: with no provider at all the built-in local model answers chat,
 * the AI routes and an agent, deterministically, in pieces, metered; a model server on Ollama's port
 * is found as the local start looks for it (local/model-server.ts, what bin/local.ts runs) and serves
 * the chat with its models. The configuration refuses both in AWS.
 */

// The agents bed brings a fake provider; this file takes every provider away and restores them after.
const bed = useAgentsTestBed();
const LOCAL_SETTINGS = ['LOCAL_MODEL', 'LOCAL_MODEL_URL', 'LOCAL_MODEL_SERVER_MODELS', 'LOCAL_MODEL_PROBE_URLS'] as const;
const saved = Object.fromEntries([...LOCAL_SETTINGS, 'MODEL_API_BASE_URL'].map((k) => [k, process.env[k]]));
const NO_PROVIDER = { MODEL_API_BASE_URL: undefined, OPENAI_API_KEY: undefined, ANTHROPIC_API_KEY: undefined, GOOGLE_API_KEY: undefined };
const builtinOnly = () => reloadConfig({ ...NO_PROVIDER, LOCAL_MODEL: 'builtin', LOCAL_MODEL_URL: undefined, LOCAL_MODEL_SERVER_MODELS: undefined });
beforeAll(builtinOnly);
afterAll(() => reloadConfig(saved));

async function subscriber(plan = 'solo'): Promise<TestSession> {
  const session = await accountSession();
  await subscribe(session.userId, plan);
  return session;
}

const aiChat = (session: TestSession, content: string, extra: { body?: Record<string, unknown>; headers?: Record<string, string> } = {}) =>
  call('POST', '/api/ai/chat', { session, body: { messages: [{ role: 'user', content }], ...extra.body }, headers: extra.headers });

const usageOf = (userId: string) => tenant(userId).queryAll<Record<string, unknown>>(keys.modelUsagePrefix);

describe('the built-in local model, with no provider key', () => {
  it('is in the catalogue under its own name, the only available model, on every plan', async () => {
    const models = await call('GET', '/api/ai/models');
    const available = models.body.models.filter((m: { available: boolean }) => m.available);
    expect(available).toEqual([
      expect.objectContaining({ id: BUILTIN_MODEL_ID, name: 'Built-in local model', provider: 'local', inputCost: 0, outputCost: 0 }),
    ]);
    const label = await subscriber('label');
    expect((await call('POST', '/api/ai/models/select', { session: label, body: { taskType: 'reasoning' } })).body.model.id).toBe(BUILTIN_MODEL_ID);
  });

  it('answers /api/ai/chat deterministically from the conversation, saying what it is and how to connect a real model; usage is recorded', async () => {
    const session = await subscriber();
    const first = await aiChat(session, 'Which dates are open in June?');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ model: BUILTIN_MODEL_ID, provider: 'local' });
    const answer: string = first.body.message.content;
    expect(answer).toMatch(/built-in local model/);
    expect(answer).toContain('“Which dates are open in June?”');
    expect(answer).toMatch(/LOCAL_MODEL_URL.*MODEL_API_BASE_URL/);
    expect((await aiChat(session, 'Which dates are open in June?')).body.message.content).toBe(answer);
    expect((await aiChat(session, 'Something else')).body.message.content).not.toBe(answer);
    expect(first.body.usage).toEqual({ promptTokens: expect.any(Number), completionTokens: Math.ceil(answer.length / 4), totalTokens: expect.any(Number) });
    expect(first.body.usage.promptTokens).toBeGreaterThan(0);
    expect(await usageOf(session.userId)).toEqual([
      expect.objectContaining({ model: BUILTIN_MODEL_ID, calls: 3, promptTokens: expect.any(Number), completionTokens: expect.any(Number) }),
    ]);
  });

  it('streams its answer in several pieces, with the usage in the last event', async () => {
    const session = await subscriber();
    const whole = (await aiChat(session, 'stream it')).body.message.content;
    const res = await aiChat(session, 'stream it', { headers: { accept: 'text/event-stream' } });
    const frames = sseFramesOf(res.text!);
    expect(frames.filter((f) => f.event === 'delta').length).toBeGreaterThan(1);
    expect(deltaText(frames)).toBe(whole);
    expect(frames.at(-1)).toMatchObject({ event: 'done', data: { model: BUILTIN_MODEL_ID, usage: { completionTokens: Math.ceil(whole.length / 4) } } });
  });

  it('stops at the output ceiling the caller sets', async () => {
    const res = await aiChat(await subscriber(), 'short please', { body: { max_tokens: 12 }, headers: { accept: 'text/event-stream' } });
    const done = sseFramesOf(res.text!).at(-1)!;
    expect(done).toMatchObject({ event: 'done', data: { model: BUILTIN_MODEL_ID, finishReason: 'length' } });
    expect((done.data as { usage: { completionTokens: number } }).usage.completionTokens).toBeLessThanOrEqual(12);
  });

  it('answers a running agent whose default model no provider serves: the exchange streamed, stored and metered under the agent', async () => {
    const { user, agentId } = await runningAgent(bed);
    const res = await call('POST', '/api/chat', { session: user, body: { agentId, message: 'Hello, who are you?', stream: true } });
    expect(res.status).toBe(200);
    const frames = sseFramesOf(res.text!);
    expect(frames.filter((f) => f.event === 'delta').length).toBeGreaterThan(1);
    expect(deltaText(frames)).toMatch(/^This is the built-in local model/);
    expect(deltaText(frames)).toContain('“Hello, who are you?”');
    const history = await call('GET', `/api/chat?agentId=${agentId}`, { session: user });
    expect(history.body.messages.map((m: { role: string }) => m.role)).toEqual(['assistant', 'user']);
    expect(await usageOf(user.userId)).toEqual([expect.objectContaining({ agentId, model: BUILTIN_MODEL_ID, calls: 1 })]);
  }, 60_000);

  it('gives way to a provider once one is set: the provider answers the agent default model and selection', async () => {
    reloadConfig({ MODEL_API_BASE_URL: bed.model.baseUrl });
    try {
      const res = await aiChat(await subscriber(), 'real one?', { body: { model: 'openai/gpt-4o-mini' } });
      expect(res.body).toMatchObject({ model: 'openai/gpt-4o-mini', message: { content: fakeAnswerTo('real one?') } });
      expect((await call('POST', '/api/ai/models/select', { body: { taskType: 'general' } })).body.model.id).not.toMatch(/^local\//);
    } finally {
      builtinOnly();
    }
  });
});

describe('the configuration of the keyless model', () => {
  const envWith = (settings: Record<string, string | undefined>) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...NO_PROVIDER, LOCAL_MODEL: undefined, ...settings };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    return env;
  };
  const sectionIn = (env: NodeJS.ProcessEnv) => localModelConfig.buildFrom(env, validateAllSettings(env));

  it('is on by default on the local stack only: the built-in model, and a look at Ollama and llama.cpp server', () => {
    expect(sectionIn(envWith({ STAGE: 'local' }))).toMatchObject({
      mode: 'auto',
      builtin: true,
      probeUrls: ['http://127.0.0.1:11434/v1', 'http://127.0.0.1:8080/v1'],
    });
    expect(sectionIn(envWith({ STAGE: 'local', LOCAL_MODEL_URL: 'http://127.0.0.1:1234/v1' })).probeUrls).toEqual(['http://127.0.0.1:1234/v1']);
    expect(sectionIn(envWith({ STAGE: 'test' }))).toMatchObject({ mode: 'off', builtin: false, probeUrls: [] });
  });

  it('is refused in AWS, and a function in Lambda is in AWS whatever STAGE says', () => {
    for (const settings of [
      { STAGE: 'aws', LOCAL_MODEL: 'builtin' },
      { STAGE: 'aws', LOCAL_MODEL: 'auto' },
      { STAGE: 'aws', LOCAL_MODEL_URL: 'http://127.0.0.1:11434/v1', LOCAL_MODEL_SERVER_MODELS: 'llama3' },
      { STAGE: 'local', LOCAL_MODEL: 'builtin', AWS_LAMBDA_FUNCTION_NAME: 'agent-platform-ai' },
    ])
      expect(() => validateAllSettings(envWith(settings)), JSON.stringify(settings)).toThrow(/LOCAL_MODEL.*local stack only/);
  });
});

describe('a model server on the Ollama port, found as the local start looks for it', () => {
  it('adds its models to the catalogue, says so, and answers the chat, whole and streamed, in the OpenAI wire format', async () => {
    // Held only for this test's few calls; spawned stacks under test never look (test/helpers/local-stack.ts).
    const ollama = await startFakeModelServer({ port: 11434, models: ['llama3.2:latest'] });
    try {
      reloadConfig({ LOCAL_MODEL: 'auto', LOCAL_MODEL_PROBE_URLS: 'http://127.0.0.1:9/v1,http://127.0.0.1:11434/v1' });
      const found = await localModelSettings();
      expect(found).toEqual({
        settings: { LOCAL_MODEL_URL: 'http://127.0.0.1:11434/v1', LOCAL_MODEL_SERVER_MODELS: 'llama3.2:latest' },
        report: 'local model server found at http://127.0.0.1:11434/v1: models llama3.2:latest',
      });
      reloadConfig(found.settings);
      const ids = catalogue().models.map((m) => m.id);
      expect(ids).toContain('local/llama3.2:latest');
      expect(ids).not.toContain(BUILTIN_MODEL_ID);

      const session = await subscriber();
      // The agent's default model, which no provider serves, is answered by the server's model.
      const whole = await aiChat(session, 'Is the 14th free?', { body: { model: 'openai/gpt-4o-mini' } });
      expect(whole.body).toMatchObject({ model: 'local/llama3.2:latest', message: { content: fakeAnswerTo('Is the 14th free?') } });
      const streamed = await aiChat(session, 'and the 15th?', { headers: { accept: 'text/event-stream' } });
      expect(deltaText(sseFramesOf(streamed.text!))).toBe(fakeAnswerTo('and the 15th?'));
      expect(ollama.requests.map((r) => [r.path, r.body.model, r.body.stream ?? false])).toEqual([
        ['/v1/chat/completions', 'llama3.2:latest', false],
        ['/v1/chat/completions', 'llama3.2:latest', true],
      ]);
      expect(await usageOf(session.userId)).toEqual([expect.objectContaining({ model: 'local/llama3.2:latest', calls: 2 })]);
    } finally {
      await ollama.close();
      builtinOnly();
      reloadConfig({ LOCAL_MODEL_PROBE_URLS: undefined });
    }
  });

  it('without a server the start says the built-in model answers', async () => {
    reloadConfig({ LOCAL_MODEL: 'auto', LOCAL_MODEL_PROBE_URLS: 'http://127.0.0.1:9/v1' });
    try {
      expect(await localModelSettings()).toEqual({
        settings: {},
        report: expect.stringMatching(/^no model server at http:\/\/127\.0\.0\.1:9\/v1: the built-in local model answers chat/),
      });
      expect(catalogue().models.map((m) => m.id)).toContain(BUILTIN_MODEL_ID);
    } finally {
      builtinOnly();
      reloadConfig({ LOCAL_MODEL_PROBE_URLS: undefined });
    }
  });
});
