import { accessFrom, getSubscription } from '#domain/billing/entitlements';
import { estimateCost, listModels, providerHealth, selectModel } from '#domain/ai/model-layer';
import { aiContract } from '#contract/ai';
import { notFound } from '#platform/errors';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { streamingEntry } from '#http/response-streaming';
import { aiChat } from './chat';

const now = () => new Date().toISOString();

function countsByProvider(models: { provider: string }[]) {
  const counts: Record<string, number> = {};
  for (const m of models) counts[m.provider] = (counts[m.provider] ?? 0) + 1;
  return counts;
}

export const handler = createHandler(aiContract, {
  getAiHealth: async () => {
    const providers = await providerHealth();
    const states = Object.values(providers);
    if (!states.length) return reply.json(503, { status: 'error', error: 'no AI provider is configured', code: 'AI_NOT_CONFIGURED' });
    return { status: states.every(Boolean) ? 'healthy' : 'degraded', providers, timestamp: now() };
  },
  listAiModels: async () => {
    const models = listModels();
    return { ...countsByProvider(models), models, count: models.length, timestamp: now() };
  },
  listAiProviderModels: async ({ params }) => {
    const models = listModels().filter((m) => m.provider === params.provider);
    if (!models.length) throw notFound(`no provider ${params.provider}`);
    return { provider: params.provider, models, count: models.length, timestamp: now() };
  },
  selectAiModel: async ({ auth, body }) => {
    const allowed = auth ? accessFrom(auth, await getSubscription(auth.userId)).models : undefined;
    const model = selectModel(body.taskType, allowed);
    return { model: { id: model.id, provider: model.id.split('/')[0]! }, taskType: body.taskType, timestamp: now() };
  },
  estimateAiCost: async ({ body }) => ({ ...estimateCost(body.model, body.inputTokens, body.outputTokens), timestamp: now() }),
  aiChat: async ({ auth, body, headers }) => aiChat(auth, body, headers),
});

/** The Function URL entry (response streaming): the same pipeline, its events written as they come. */
export const streamHandler = streamingEntry(aiContract, handler);
