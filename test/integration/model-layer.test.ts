import { randomUUID } from 'node:crypto';
import { tool } from 'ai';
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { billingPeriod } from '#domain/ai/metering';
import {
  generateChat,
  InsufficientCreditsAiError,
  ModelRestrictedError,
  PlanRequiredError,
  ProviderFailureError,
  speechProvider,
  streamChat,
  type AccountIdentity,
} from '#domain/ai/model-layer';
import { adjustCredits, type CreditEntry } from '#domain/billing/credits';
import { catalogue } from '#domain/models/catalogue';
import * as keys from '#data/keys';
import { getGlobal, tenant } from '#data/tenant';
import { createUser, getUser } from '#data/users';
import { fakeAnswerTo, fakePromptTokens } from '../helpers/fake-model-server';
import { useFakeModelProviders } from '../helpers/model-providers';
import { subscribe } from './agents-helpers';
import { enableByok } from '#functions/http/billing/byok';

const bed = useFakeModelProviders();

async function account(plan: string | null = 'solo', status = 'active', credits = 0): Promise<AccountIdentity> {
  const { userId } = await createUser({ email: `${randomUUID()}@example.com` });
  if (plan) await subscribe(userId, plan, status);
  if (credits) await adjustCredits(userId, credits, 'purchase');
  return { userId, isAdmin: false, isTester: false };
}

const ask = (text: string) => [{ role: 'user' as const, content: text }];

async function usageItems(userId: string) {
  return tenant(userId).queryAll<Record<string, unknown>>(keys.modelUsagePrefix);
}

/** Uses up the plan's included spend of the current period. */
async function exhaustAllowance(userId: string, plan: keyof ReturnType<typeof catalogue>['includedCredits']) {
  const included = catalogue().includedCredits[plan];
  await tenant(userId).put({ ...keys.modelAllowance(userId, billingPeriod(undefined).start), used: included, included });
}

describe('model layer: plan access from the stored account', () => {
  it.each([
    ['label', 2],
    ['solo', 4],
    ['collective', 6],
    ['network', catalogue().models.length],
  ])('%s: %i models; a model outside the plan is MODEL_RESTRICTED with the allowed list', async (plan, count) => {
    const caller = await account(plan);
    const outside = catalogue().models.find((m) => m.minPlan === 'network')!.id;
    const err = await generateChat({
      caller: { kind: 'account', account: caller },
      model: plan === 'network' ? 'nope/missing' : outside,
      messages: ask('hi'),
    }).catch((e) => e);
    if (plan === 'network') {
      expect(err.code).toBe('UNKNOWN_MODEL');
      return;
    }
    expect(err).toBeInstanceOf(ModelRestrictedError);
    expect(err.allowedModels).toHaveLength(count);
    expect(err.allowedModels).toContain('openai/gpt-4o-mini');
  });

  it('an admin gets every model without a plan or subscription, and pays nothing', async () => {
    const { userId } = await createUser({ email: `${randomUUID()}@example.com` });
    const out = await generateChat({
      caller: { kind: 'account', account: { userId, isAdmin: true, isTester: false } },
      model: 'anthropic/claude-opus-4',
      messages: ask('admin'),
    });
    expect(out.text).toBe(fakeAnswerTo('admin'));
    expect(out.creditsCharged).toBe(0);
  });

  it('no plan → PLAN_REQUIRED; a plan without an active subscription → SUBSCRIPTION_REQUIRED; nothing reaches the provider', async () => {
    const before = bed.model.requests.length;
    const none = await generateChat({ caller: { kind: 'account', account: await account(null) }, messages: ask('x') }).catch((e) => e);
    expect(none).toBeInstanceOf(PlanRequiredError);
    expect(none.code).toBe('PLAN_REQUIRED');
    const canceled = await generateChat({ caller: { kind: 'account', account: await account('network', 'canceled') }, messages: ask('x') }).catch((e) => e);
    expect(canceled.code).toBe('SUBSCRIPTION_REQUIRED');
    expect(bed.model.requests.length).toBe(before);
  });
});

describe('model layer: calls and metering', () => {
  it('chats through the aggregator by <vendor>/<model> id and records exactly the provider token counts', async () => {
    const caller = await account('solo');
    const out = await generateChat({
      caller: { kind: 'account', account: caller, agentId: 'agt_meter' },
      model: 'openai/gpt-4o-mini',
      messages: ask('count me'),
      maxTokens: 50,
    });
    const sent = bed.model.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body.model).toBe('openai/gpt-4o-mini');
    expect(sent.body.max_tokens).toBe(50);
    expect(sent.authorization).toBe('Bearer test-aggregator-key');
    const completionTokens = fakeAnswerTo('count me').length;
    expect(out.usage).toEqual({ promptTokens: fakePromptTokens(1), completionTokens, totalTokens: fakePromptTokens(1) + completionTokens });
    const [item] = await usageItems(caller.userId);
    expect(item).toMatchObject({
      model: 'openai/gpt-4o-mini',
      agentId: 'agt_meter',
      promptTokens: fakePromptTokens(1),
      completionTokens,
      calls: 1,
      credits: 0,
    });
    expect(item!.sk).toMatch(/^USAGE#\d{4}-\d{2}-\d{2}#agt_meter#openai\/gpt-4o-mini$/);
  });

  it('auto-selects the cheapest allowed model for the task type', async () => {
    const out = await generateChat({ caller: { kind: 'account', account: await account('label') }, taskType: 'fast', messages: ask('quick') });
    expect(out.model).toBe('google/gemini-2.0-flash');
  });

  it('a direct provider wins over the aggregator: Anthropic models go to the Messages API with the Anthropic key', async () => {
    const out = await generateChat({
      caller: { kind: 'account', account: await account('solo') },
      model: 'anthropic/claude-3-5-haiku',
      messages: ask('direct'),
      temperature: 1.7,
    });
    const sent = bed.model.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.authorization).toBe('test-anthropic-key');
    expect(sent.body.model).toBe('claude-3-5-haiku-latest');
    expect(sent.body.temperature).toBe(1);
    expect(out.servedBy).toBe('anthropic');
    expect(out.usage.completionTokens).toBe(fakeAnswerTo('direct').length);
  });

  it('streams text deltas and then meters the usage the stream reported', async () => {
    const caller = await account('solo');
    for (const model of ['openai/gpt-4o-mini', 'anthropic/claude-3-5-haiku']) {
      const stream = await streamChat({ caller: { kind: 'account', account: caller }, model, messages: ask(`stream ${model}`) });
      const deltas: string[] = [];
      for await (const d of stream.textStream) deltas.push(d);
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join('')).toBe(fakeAnswerTo(`stream ${model}`));
      const result = await stream.result;
      expect(result.usage.completionTokens).toBe(fakeAnswerTo(`stream ${model}`).length);
      expect(bed.model.requests.at(-1)!.body.stream).toBe(true);
    }
    const items = await usageItems(caller.userId);
    expect(items.map((i) => i.model).sort()).toEqual(['anthropic/claude-3-5-haiku', 'openai/gpt-4o-mini']);
  });

  it('runs a multi-step tool loop within the step limit and meters every step', async () => {
    const caller = await account('solo');
    bed.model.toolCall = { name: 'venueLookup', input: { city: 'Berlin' } };
    const seen: string[] = [];
    try {
      const out = await generateChat({
        caller: { kind: 'account', account: caller },
        model: 'openai/gpt-4o-mini',
        messages: ask('find a venue'),
        tools: {
          venueLookup: tool({
            description: 'venues in a city',
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => {
              seen.push(city);
              return { venues: ['Berghain'] };
            },
          }),
        },
        maxSteps: 3,
      });
      expect(seen).toEqual(['Berlin']);
      expect(out.steps).toBe(2);
      expect(out.text).toBe(fakeAnswerTo('find a venue'));
      const [item] = await usageItems(caller.userId);
      expect(item!.promptTokens).toBe(out.usage.promptTokens);
      expect(out.usage.promptTokens).toBe(fakePromptTokens(1) + fakePromptTokens(3));
    } finally {
      bed.model.toolCall = undefined;
    }
  });

  it('a pre-paid caller has no plan gate and is metered under its payer record', async () => {
    const payer = `0x${randomUUID().replaceAll('-', '').padEnd(40, '0')}`;
    const out = await generateChat({ caller: { kind: 'prepaid', payerId: payer, reference: '0xtx' }, model: 'anthropic/claude-opus-4', messages: ask('paid') });
    expect(out.creditsCharged).toBe(0);
    const item = await getGlobal<Record<string, unknown>>(keys.payerUsage(payer, new Date().toISOString().slice(0, 10), 'anthropic/claude-opus-4'));
    expect(item).toMatchObject({ promptTokens: out.usage.promptTokens, completionTokens: out.usage.completionTokens, lastReference: '0xtx', calls: 1 });
  });

  it('provider failure and timeout are domain errors, and the reservation is given back', async () => {
    const caller = await account('solo', 'active', 50);
    await exhaustAllowance(caller.userId, 'solo');
    bed.model.failWith = 500;
    try {
      const err = await generateChat({ caller: { kind: 'account', account: caller }, model: 'openai/gpt-4o-mini', messages: ask('fail') }).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderFailureError);
      expect(err.code).toBe('PROVIDER_ERROR');
      const streamErr = await streamChat({ caller: { kind: 'account', account: caller }, model: 'openai/gpt-4o-mini', messages: ask('fail') }).catch((e) => e);
      expect(streamErr.code).toBe('PROVIDER_ERROR');
    } finally {
      bed.model.failWith = undefined;
    }
    bed.model.hang = true;
    bed.apply({ MODEL_API_TIMEOUT_MS: '300' });
    try {
      const started = Date.now();
      const err = await generateChat({ caller: { kind: 'account', account: caller }, model: 'openai/gpt-4o-mini', messages: ask('hang') }).catch((e) => e);
      expect(err.code).toBe('PROVIDER_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      bed.model.hang = false;
      bed.apply({ MODEL_API_TIMEOUT_MS: undefined });
    }
    expect((await getUser(caller.userId, true))!.credits).toBe(50);
    expect(await usageItems(caller.userId)).toEqual([]);
  });
});

describe('model layer: spending rule', () => {
  it('past the included allowance, 50 concurrent chats against 5 credits debit exactly 5 and never go negative', async () => {
    const caller = await account('solo', 'active', 5);
    await exhaustAllowance(caller.userId, 'solo');
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => generateChat({ caller: { kind: 'account', account: caller }, model: 'openai/gpt-4o-mini', messages: ask(`c${i}`) })),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    for (const r of refused) expect(r.reason).toBeInstanceOf(InsufficientCreditsAiError);
    expect(ok).toHaveLength(5);
    const balance = (await getUser(caller.userId, true))!.credits;
    expect(balance).toBe(0);
    const ledger = await tenant(caller.userId).queryAll<CreditEntry & Record<string, unknown>>(keys.creditPrefix);
    expect(ledger.reduce((s, e) => s + e.delta, 0)).toBe(0);
    expect(ledger.filter((e) => e.reason === 'usage')).toHaveLength(5);
    const items = await usageItems(caller.userId);
    expect(items.reduce((s, i) => s + (i.calls as number), 0)).toBe(5);
    expect(items.reduce((s, i) => s + (i.credits as number), 0)).toBe(5);
  });

  it('within the allowance nothing is debited; with it used up and no credits → INSUFFICIENT_CREDITS before any provider call', async () => {
    const caller = await account('label');
    const out = await generateChat({ caller: { kind: 'account', account: caller }, model: 'openai/gpt-4o-mini', messages: ask('free') });
    expect(out.creditsCharged).toBe(0);
    await exhaustAllowance(caller.userId, 'label');
    const before = bed.model.requests.length;
    await expect(generateChat({ caller: { kind: 'account', account: caller }, messages: ask('broke') })).rejects.toBeInstanceOf(InsufficientCreditsAiError);
    expect(bed.model.requests.length).toBe(before);
  });

  it("BYOK: the user's own key is sent and the call costs no credits", async () => {
    const caller = await account('solo');
    await exhaustAllowance(caller.userId, 'solo');
    await enableByok(caller.userId, 'openrouter', 'sk-or-user-own-key-1234');
    const out = await generateChat({ caller: { kind: 'account', account: caller }, model: 'mistral/mistral-small', messages: ask('mine') });
    expect(bed.model.requests.at(-1)!.authorization).toBe('Bearer sk-or-user-own-key-1234');
    expect(out.byok).toBe(true);
    expect(out.creditsCharged).toBe(0);
    const [item] = await usageItems(caller.userId);
    expect(item).toMatchObject({ byok: true, credits: 0 });
  });
});

describe('model layer: speech', () => {
  it('offers the resolved OpenAI-wire provider for tts and stt', async () => {
    const speech = await speechProvider();
    expect(speech?.name).toBe('openai-compatible');
    expect(typeof speech?.provider.speech).toBe('function');
    expect(typeof speech?.provider.transcription).toBe('function');
  });
});
