import type * as z from 'zod/mini';
import { generateChat, NoModelAvailableError, ProviderFailureError, streamChat, type ModelCallInput, type ModelStream } from '#domain/ai/model-layer';
import type { RuntimeChatMessage } from '#contract/runtime-model';
import { getAgent } from '#data/agents';
import { getInstance } from '#data/instances';
import { notFound, unavailable, upstreamFailed } from '#platform/errors';
import { StreamReply } from '#http/reply';
import { agentModel, ownerRights } from '#domain/auth/runtime-agent';

/**
 * The model layer for one agent: the same gate and metering as every model call (domain/ai), with
 * the provider key kept here. This route keeps its own codes for "no provider" and provider
 * failures, which the runtime shows its users.
 */
export async function completion(userId: string, body: { agentId: string; messages: z.infer<ReturnType<typeof RuntimeChatMessage>>[]; stream?: boolean }) {
  const [agent, instance, rights] = await Promise.all([getAgent(userId, body.agentId), getInstance(userId), ownerRights(userId)]);
  if (!agent || !instance || !rights) throw notFound('no such agent');
  const input: ModelCallInput = {
    caller: { kind: 'account', account: { userId, ...rights }, agentId: agent.id },
    model: agentModel(agent),
    fallbackModels: agent.config?.fallbackModels,
    messages: body.messages,
    temperature: agent.config?.temperature,
    maxTokens: agent.config?.maxTokens,
  };
  try {
    if (body.stream) return new StreamReply(completionEvents(await streamChat(input)));
    const out = await generateChat(input);
    return {
      id: out.id,
      object: 'chat.completion' as const,
      created: Math.floor(Date.now() / 1000),
      model: out.model,
      ...(out.fallbackFrom ? { fallbackFrom: out.fallbackFrom } : {}),
      choices: [{ index: 0, message: { role: 'assistant' as const, content: out.text }, finish_reason: out.finishReason }],
      usage: openAiUsage(out.usage),
    };
  } catch (err) {
    if (err instanceof NoModelAvailableError)
      throw unavailable(
        `no model provider is configured for ${agentModel(agent)}: the platform's operator sets MODEL_API_BASE_URL (an OpenAI-compatible endpoint) or the vendor's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY)`,
        'MODEL_NOT_CONFIGURED',
      );
    if (err instanceof ProviderFailureError) throw upstreamFailed(err.message, 'MODEL_PROVIDER_ERROR');
    throw err;
  }
}

const openAiUsage = (u: { promptTokens: number; completionTokens: number; totalTokens: number }) => ({
  prompt_tokens: u.promptTokens,
  completion_tokens: u.completionTokens,
  total_tokens: u.totalTokens,
});

/** The streamed completion: `delta` {content} per text piece, then `done` {id, model, fallbackFrom?, finish_reason, usage}, or `error` {error, code}. */
async function* completionEvents(stream: ModelStream) {
  try {
    for await (const content of stream.textStream) yield { event: 'delta', data: { content } };
    const out = await stream.result;
    const fallback = out.fallbackFrom ? { fallbackFrom: out.fallbackFrom } : {};
    yield { event: 'done', data: { id: out.id, model: out.model, ...fallback, finish_reason: out.finishReason, usage: openAiUsage(out.usage) } };
  } catch (err) {
    yield { event: 'error', data: { error: 'the model provider failed while streaming', code: (err as { code?: string }).code ?? 'MODEL_PROVIDER_ERROR' } };
  }
}
