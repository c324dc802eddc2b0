import type * as z from 'zod/mini';
import type { AuthContext } from '#domain/auth/authenticate';
import { generateChat, streamChat, type ModelCallInput, type ModelCallResult, type TokenUsage } from '#domain/ai/model-layer';
import { sendChatMessage, StillWakingError } from '#domain/chat/chat';
import { streamAgentExchange, type AgentStreamEvent } from '#domain/chat/agent-stream';
import { agentIdOfModel, type ChatCompletionRequest } from '#contract/openai-compatible';
import { wakeConfig } from '#platform/config';
import { DomainError, invalid, notFound } from '#platform/errors';
import { StreamReply } from '#http/reply';
import { chatCompletionChunks, openAiFinishReason, type CompletionPart, type CompletionToolCall, type CompletionUsage } from './chunks';
import { agentTurnsOf, modelMessagesOf } from './messages';

/**
 * `POST /v1/chat/completions`: another front door to the model layer (the same gate, budgets and
 * metering as `POST /api/ai/chat`) and to the caller's agents (the same exchange as `POST /api/chat`).
 */

type Body = z.infer<ReturnType<typeof ChatCompletionRequest>>;

const AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

const nowSeconds = () => Math.floor(Date.now() / 1000);

const usageOf = (u: TokenUsage): CompletionUsage => ({ prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.totalTokens });

const toolCallsOf = (out: Pick<ModelCallResult, 'toolCalls'>): CompletionToolCall[] =>
  out.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));

function completion(
  id: string,
  model: string,
  content: string | null,
  finishReason: string,
  usage: CompletionUsage,
  toolCalls: CompletionToolCall[] = [],
  fallbackFrom?: string,
) {
  return {
    id,
    object: 'chat.completion' as const,
    created: nowSeconds(),
    model,
    ...(fallbackFrom ? { fallbackFrom } : {}),
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content, refusal: null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
        finish_reason: openAiFinishReason(finishReason),
        logprobs: null,
      },
    ],
    usage,
  };
}

export async function createChatCompletion(auth: AuthContext, body: Body) {
  const agentId = agentIdOfModel(body.model);
  if (agentId !== undefined) return agentCompletion(auth, agentId, body);
  return modelCompletion(auth, body);
}

function modelCallInput(auth: AuthContext, body: Body): ModelCallInput {
  const choice = body.tool_choice;
  return {
    caller: { kind: 'account', account: auth },
    model: body.model,
    messages: modelMessagesOf(body.messages),
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    stopSequences: body.stop == null ? undefined : typeof body.stop === 'string' ? [body.stop] : body.stop,
    ...(body.tools?.length
      ? {
          clientTools: body.tools.map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters })),
          toolChoice: typeof choice === 'object' ? { toolName: choice.function.name } : choice,
        }
      : {}),
  };
}

async function modelCompletion(auth: AuthContext, body: Body) {
  const input = modelCallInput(auth, body);
  if (!body.stream) {
    const out = await generateChat(input);
    const toolCalls = toolCallsOf(out);
    return completion(out.id, out.model, out.text || (toolCalls.length ? null : ''), out.finishReason, usageOf(out.usage), toolCalls, out.fallbackFrom);
  }
  const stream = await streamChat(input);
  async function* parts(): AsyncGenerator<CompletionPart> {
    for await (const text of stream.textStream) yield { type: 'text', text };
    const out = await stream.result;
    yield { type: 'end', finishReason: openAiFinishReason(out.finishReason), usage: usageOf(out.usage), toolCalls: toolCallsOf(out) };
  }
  const head = { id: stream.id, model: stream.model, created: nowSeconds(), includeUsage: !!body.stream_options?.include_usage };
  return new StreamReply(chatCompletionChunks(head, parts()));
}

/** The wake wait ended before the agent ran: retry once the launch is through (the OpenAI SDKs honour Retry-After on a 503). */
const stillWaking = (operationId: string) =>
  new DomainError(
    'unavailable',
    'the agent is waking up; retry shortly',
    'AGENT_WAKING',
    { operationId },
    { retryAfterSeconds: Math.max(1, Math.ceil(wakeConfig().waitMs / 1000 / 4)) },
  );

async function agentCompletion(auth: AuthContext, agentId: string, body: Body) {
  if (!AGENT_ID.test(agentId)) throw notFound(`no model ${body.model}`);
  if (body.tools?.length) throw invalid('an agent runs its own skills: `tools` are not taken with an agent model', 'TOOLS_NOT_SUPPORTED', { param: 'tools' });
  const { message, thread } = agentTurnsOf(body.messages);
  const model = body.model;
  if (!body.stream) {
    let answer: Awaited<ReturnType<typeof sendChatMessage>>;
    try {
      answer = await sendChatMessage(auth, agentId, message, thread, 'chat');
    } catch (err) {
      if (err instanceof StillWakingError) throw stillWaking(err.operationId);
      throw err;
    }
    return completion(`chatcmpl-${answer.reply.id}`, model, answer.reply.content, 'stop', usageOf(answer.usage));
  }
  const answer = await streamAgentExchange(auth, agentId, message, thread);
  if (answer.state === 'waking') throw stillWaking(answer.operationId);
  const head = { id: `chatcmpl-${crypto.randomUUID()}`, model, created: nowSeconds(), includeUsage: !!body.stream_options?.include_usage };
  return new StreamReply(chatCompletionChunks(head, agentParts(answer.events)));
}

async function* agentParts(events: AsyncIterable<AgentStreamEvent>): AsyncGenerator<CompletionPart> {
  for await (const e of events) {
    if (e.event === 'delta') yield { type: 'text', text: e.data.content };
    else if (e.event === 'done') {
      yield { type: 'end', finishReason: 'stop', usage: usageOf(e.data.usage) };
      return;
    } else throw new DomainError('upstreamFailed', e.data.error, e.data.code);
  }
}
