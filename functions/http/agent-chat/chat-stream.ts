import type { AuthContext } from '#domain/auth/authenticate';
import { runtimeEventStream, RuntimeUnreachableError } from '#adapters/launcher';
import { accountAccess, requireActiveSubscription } from '#domain/billing/entitlements';
import { modelConfig, wakeConfig } from '#platform/config';
import { getAgent } from '#data/agents';
import { recordActivity } from '#data/idle-watch';
import { gatewayToken, getInstance } from '#data/instances';
import { conflict, DomainError, notFound, upstreamFailed } from '#platform/errors';
import { StreamReply } from '#http/reply';
import { wakeAndWait } from '#domain/lifecycle/wake';
import { storedExchange } from '#domain/chat/chat';
import { keepWhileWaking } from './chat';

/**
 * `POST /api/chat` with `stream: true` (or `Accept: text/event-stream`): the same exchange as
 * `sendChatMessage`, its answer relayed as server-sent events while the agent's runtime streams it
 * from the model layer. Refusals before the first piece keep their status (402, 404, 409, 502);
 * after it, a failure ends the stream with an `error` event. The runtime stores the exchange once.
 */

type RuntimeEvent = { event: string; data: unknown };

export async function streamChatMessage(auth: AuthContext, agentId: string, message: string) {
  const [agent, access, current] = await Promise.all([getAgent(auth.userId, agentId), accountAccess(auth), getInstance(auth.userId)]);
  let instance = current;
  if (!agent) throw notFound('no such agent');
  requireActiveSubscription(access);
  await recordActivity(auth.userId);
  // An agent stopped for idleness wakes for a streamed chat as for any chat: past the wait, 202 and delivery later.
  if (instance && instance.status !== 'running') {
    const woke = await wakeAndWait(auth.userId, 'chat', wakeConfig().waitMs);
    if (woke.state === 'waking') return keepWhileWaking(auth.userId, { operationId: woke.operationId }, { agentId, message, source: 'chat' });
    if (woke.state === 'running') instance = woke.instance;
  }
  const endpoint = instance?.handle?.endpoint;
  if (instance?.status !== 'running' || !endpoint || agent.phase !== 'ready') {
    throw conflict(`the agent is not running (instance ${instance?.status ?? 'not provisioned'}); start it first`, 'AGENT_NOT_RUNNING');
  }
  const sentAt = new Date().toISOString();
  let answer: Awaited<ReturnType<typeof runtimeEventStream>>;
  try {
    answer = await runtimeEventStream(
      endpoint,
      await gatewayToken(auth.userId),
      `/agents/${encodeURIComponent(agentId)}/chat`,
      { content: message, stream: true },
      modelConfig().timeoutMs + 5_000,
    );
  } catch (err) {
    if (err instanceof RuntimeUnreachableError) throw upstreamFailed('the agent did not answer', 'BACKEND_UNAVAILABLE');
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
  return new StreamReply(relay(answer.events, auth.userId, agentId, { message, sentAt }));
}

/** `delta` {content} per piece, then `done` {agentId, message, reply, usage} (the JSON answer's shape), or `error` {error, code}. */
async function* relay(events: AsyncIterable<RuntimeEvent>, userId: string, agentId: string, sent: { message: string; sentAt: string }) {
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
