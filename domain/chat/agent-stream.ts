import type { AuthContext } from '#domain/auth/authenticate';
import { runtimeEventStream, RuntimeUnreachableError } from '#adapters/launcher';
import { accountAccess, requireActiveSubscription } from '#domain/billing/entitlements';
import { modelConfig } from '#platform/config';
import { getAgent } from '#data/agents';
import { recordActivity } from '#data/idle-watch';
import { gatewayToken, getInstance } from '#data/instances';
import { DomainError } from '#platform/errors';
import { AgentExchangeError, readyEndpoint, storedExchange } from './chat';

/**
 * One streamed exchange with the caller's agent: the same exchange as `sendChatMessage`, its answer
 * relayed while the agent's runtime streams it from the model layer. The front doors that stream
 * (`POST /api/chat` with `stream: true`, the OpenAI-compatible `/v1/chat/completions`) put these
 * events into their own wire format. Refusals before the first piece throw (no such agent, no
 * subscription, not running, no answer); after it, a failure ends the events with `error`. The
 * runtime stores the exchange once.
 */

type Turn = { role: 'user' | 'assistant'; content: string };
type RuntimeEvent = { event: string; data: unknown };

/** `delta` {content} per piece, then `done` with the stored exchange (`sendChatMessage`'s answer), or `error` {error, code}. */
export type AgentStreamEvent =
  | { event: 'delta'; data: { content: string } }
  | { event: 'done'; data: Awaited<ReturnType<typeof storedExchange>> }
  | { event: 'error'; data: { error: string; code: string } };

export type AgentStream = { state: 'waking'; operationId: string } | { state: 'streaming'; events: AsyncIterable<AgentStreamEvent> };

/** An agent stopped for idleness wakes as for any chat: `waking` when the wait (WAKE_WAIT_SECONDS) ends before it runs. */
export async function streamAgentExchange(auth: AuthContext, agentId: string, message: string, thread?: Turn[]): Promise<AgentStream> {
  const [agent, access, instance] = await Promise.all([getAgent(auth.userId, agentId), accountAccess(auth), getInstance(auth.userId)]);
  if (!agent) throw new AgentExchangeError('notFound', 'no such agent', 'NOT_FOUND');
  requireActiveSubscription(access);
  await recordActivity(auth.userId);
  // Only an instance that exists can wake; none at all is AGENT_NOT_RUNNING straight away.
  const ready = await readyEndpoint(auth.userId, agent, instance, instance ? 'chat' : undefined);
  if (ready.state === 'waking') return ready;
  const { endpoint } = ready;
  const sentAt = new Date().toISOString();
  let answer: Awaited<ReturnType<typeof runtimeEventStream>>;
  try {
    answer = await runtimeEventStream(
      endpoint,
      await gatewayToken(auth.userId),
      `/agents/${encodeURIComponent(agentId)}/chat`,
      { content: message, stream: true, ...(thread ? { thread } : {}) },
      modelConfig().timeoutMs + 5_000,
    );
  } catch (err) {
    if (err instanceof RuntimeUnreachableError) throw new AgentExchangeError('upstreamFailed', 'the agent did not answer', 'BACKEND_UNAVAILABLE');
    throw err;
  }
  if (!answer.events) {
    const body = answer.body as { error?: string; code?: string } | undefined;
    throw new DomainError(
      body?.code === 'BUDGET_EXCEEDED' ? 'paymentRequired' : 'upstreamFailed',
      body?.error ?? 'the agent did not answer',
      body?.code ?? 'BACKEND_UNAVAILABLE',
    );
  }
  return { state: 'streaming', events: relay(answer.events, auth.userId, agentId, { message, sentAt }) };
}

async function* relay(
  events: AsyncIterable<RuntimeEvent>,
  userId: string,
  agentId: string,
  sent: { message: string; sentAt: string },
): AsyncGenerator<AgentStreamEvent> {
  try {
    for await (const e of events) {
      const data = e.data as { content?: unknown; usage?: Parameters<typeof storedExchange>[3]['usage']; error?: unknown; code?: unknown };
      if (e.event === 'delta' && typeof data?.content === 'string') yield { event: 'delta', data: { content: data.content } };
      else if (e.event === 'done' && typeof data?.content === 'string') {
        yield { event: 'done', data: await storedExchange(userId, agentId, sent, { content: data.content, usage: data.usage }) };
        return;
      } else if (e.event === 'error') {
        yield {
          event: 'error',
          data: {
            error: typeof data?.error === 'string' ? data.error : 'the agent failed to answer',
            code: typeof data?.code === 'string' ? data.code : 'BACKEND_UNAVAILABLE',
          },
        };
        return;
      }
    }
  } catch {
    // The runtime's connection broke mid-answer: said in the stream, whose status is already sent.
  }
  yield { event: 'error', data: { error: 'the agent stopped answering', code: 'BACKEND_UNAVAILABLE' } };
}
