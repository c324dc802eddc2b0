import type * as z from 'zod/mini';
import { generateChat, NoModelAvailableError, ProviderFailureError } from '../../shared/ai/model-layer';
import type { RuntimeChatMessage } from '../../shared/contract/runtime-model';
import { getAgent } from '../../shared/db/agents';
import { getInstance } from '../../shared/db/instances';
import { HttpError, notFound } from '../../shared/http/errors';
import { agentModel, ownerRights } from '../instance/runtime-agent';

/**
 * The model layer for one agent: the same gate and metering as every model call (shared/ai), with
 * the provider key kept here. This route keeps its own codes for "no provider" and provider
 * failures, which the runtime shows its users.
 */
export async function completion(userId: string, body: { agentId: string; messages: z.infer<typeof RuntimeChatMessage>[] }) {
  const [agent, instance, rights] = await Promise.all([getAgent(userId, body.agentId), getInstance(userId), ownerRights(userId)]);
  if (!agent || !instance || !rights) throw notFound('no such agent');
  try {
    const out = await generateChat({
      caller: { kind: 'account', account: { userId, ...rights }, agentId: agent.id },
      model: agentModel(agent),
      messages: body.messages,
      temperature: agent.config?.temperature,
      maxTokens: agent.config?.maxTokens,
    });
    return {
      id: out.id,
      object: 'chat.completion' as const,
      created: Math.floor(Date.now() / 1000),
      model: out.model,
      choices: [{ index: 0, message: { role: 'assistant' as const, content: out.text }, finish_reason: out.finishReason }],
      usage: { prompt_tokens: out.usage.promptTokens, completion_tokens: out.usage.completionTokens, total_tokens: out.usage.totalTokens },
    };
  } catch (err) {
    if (err instanceof NoModelAvailableError)
      throw new HttpError(503, `no model provider is configured for ${agentModel(agent)}: ${err.message}`, 'MODEL_NOT_CONFIGURED');
    if (err instanceof ProviderFailureError) throw new HttpError(502, err.message, 'MODEL_PROVIDER_ERROR');
    throw err;
  }
}
