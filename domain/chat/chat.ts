import type { AuthContext } from '#domain/auth/authenticate';
import { recordActivity } from '#data/idle-watch';
import { runtimeRequest, RuntimeUnreachableError } from '#adapters/launcher';
import { accountAccess, requireActiveSubscription } from '#domain/billing/entitlements';
import { modelConfig, wakeConfig } from '#platform/config';
import { getAgent } from '#data/agents';
import { messagesBefore } from '#data/chat-history';
import { gatewayToken, getInstance } from '#data/instances';
import { DomainError, type FailureKind } from '#platform/errors';
import { wakeAndWait, type WakeSource } from '#domain/lifecycle/wake';

/**
 * Chat with one of the caller's agents: the message goes to the account's running instance, whose
 * runtime answers through the platform's model layer (plan gate and metering included) and stores
 * the exchange in the agent's history.
 */

export async function chatHistory(auth: AuthContext, agentId: string, limit: number, before?: string) {
  if (!(await getAgent(auth.userId, agentId))) throw noSuchAgent();
  return { agentId, ...(await messagesBefore(auth.userId, agentId, limit, before)) };
}

export const usageOf = (u: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | undefined) => ({
  promptTokens: u?.prompt_tokens ?? 0,
  completionTokens: u?.completion_tokens ?? 0,
  totalTokens: u?.total_tokens ?? (u?.prompt_tokens ?? 0) + (u?.completion_tokens ?? 0),
});

type Turn = { role: 'user' | 'assistant'; content: string };

/**
 * Why one exchange with an agent did not happen: no such agent, not running, or no answer. Its own
 * class so the callers that settle a failed exchange (kept deliveries, schedules, channel replies)
 * tell it from a failure of the platform, which they let through.
 */
export class AgentExchangeError extends DomainError {
  constructor(kind: FailureKind, message: string, code: string) {
    super(kind, message, code);
  }
}

const noSuchAgent = () => new AgentExchangeError('notFound', 'no such agent', 'NOT_FOUND');

/** The instance was still waking when the caller's wait ended: the caller keeps the message for later delivery. */
export class StillWakingError extends Error {
  constructor(readonly operationId: string) {
    super('the agent is waking');
  }
}

/**
 * The endpoint of the account's running instance for one exchange with the agent, or `waking`
 * when `wakeBy` woke an instance stopped for idleness and the wait (WAKE_WAIT_SECONDS) ended first.
 * Without `wakeBy`, or when the instance still does not run with the agent ready, 409 AGENT_NOT_RUNNING.
 */
export async function readyEndpoint(
  userId: string,
  agent: { phase?: string },
  current: Awaited<ReturnType<typeof getInstance>>,
  wakeBy?: WakeSource,
): Promise<{ state: 'ready'; endpoint: string } | { state: 'waking'; operationId: string }> {
  let instance = current;
  if (wakeBy && instance?.status !== 'running') {
    const woke = await wakeAndWait(userId, wakeBy, wakeConfig().waitMs);
    if (woke.state === 'waking') return { state: 'waking', operationId: woke.operationId };
    if (woke.state === 'running') instance = woke.instance;
  }
  const endpoint = instance?.handle?.endpoint;
  if (instance?.status !== 'running' || !endpoint || agent.phase !== 'ready') {
    throw new AgentExchangeError(
      'conflict',
      `the agent is not running (instance ${instance?.status ?? 'not provisioned'}); start it first`,
      'AGENT_NOT_RUNNING',
    );
  }
  return { state: 'ready', endpoint };
}

/**
 * One message to the agent's runtime on the account's running instance (409 when it is not
 * running); its answer and usage. Also how inbound channel messages reach the agent. With `wakeBy`
 * an instance stopped for idleness is woken first and waited for (WAKE_WAIT_SECONDS), and a wait
 * that ends before it runs throws StillWakingError; without it, or for a stop the owner asked for, 409.
 */
export async function askAgent(userId: string, agentId: string, message: string, thread?: Turn[], wakeBy?: WakeSource) {
  const [agent, instance] = await Promise.all([getAgent(userId, agentId), getInstance(userId)]);
  if (!agent) throw noSuchAgent();
  // Chats, agent calls, channel messages and scheduled runs all come through here: idle auto-stop's activity.
  await recordActivity(userId);
  const ready = await readyEndpoint(userId, agent, instance, wakeBy);
  if (ready.state === 'waking') throw new StillWakingError(ready.operationId);
  const { endpoint } = ready;
  let answer;
  try {
    answer = await runtimeRequest(endpoint, await gatewayToken(userId), `/agents/${encodeURIComponent(agentId)}/chat`, {
      method: 'POST',
      body: { content: message, ...(thread ? { thread } : {}) },
      timeoutMs: modelConfig().timeoutMs + 5_000,
    });
  } catch (err) {
    if (err instanceof RuntimeUnreachableError) throw new AgentExchangeError('upstreamFailed', 'the agent did not answer', 'BACKEND_UNAVAILABLE');
    throw err;
  }
  const body = answer.body as { content?: string; usage?: Parameters<typeof usageOf>[0]; error?: string; code?: string } | undefined;
  if (answer.status !== 200 || typeof body?.content !== 'string') {
    // A spending cap the agent's model call hit is the caller's to lift, not a failure of the agent.
    const kind = body?.code === 'BUDGET_EXCEEDED' ? 'paymentRequired' : 'upstreamFailed';
    throw new AgentExchangeError(kind, body?.error ?? 'the agent did not answer', body?.code ?? 'BACKEND_UNAVAILABLE');
  }
  return { content: body.content, usage: body.usage };
}

/**
 * One exchange with the agent (askAgent) and the two messages the runtime stored for it; also how a
 * message kept during a wake is delivered (wake-delivery.ts).
 */
export async function exchangeWith(userId: string, agentId: string, message: string, thread?: Turn[], wakeBy?: WakeSource) {
  const sentAt = new Date().toISOString();
  const body = await askAgent(userId, agentId, message, thread, wakeBy);
  return storedExchange(userId, agentId, { message, sentAt }, body);
}

/** The exchange as the runtime stored it: the two newest messages are this one and its reply. */
export async function storedExchange(
  userId: string,
  agentId: string,
  sent: { message: string; sentAt: string },
  answer: { content: string; usage?: Parameters<typeof usageOf>[0] },
) {
  const { messages } = await messagesBefore(userId, agentId, 2);
  const reply = messages.find((m) => m.role === 'assistant' && m.createdAt >= sent.sentAt) ?? {
    id: 'unstored',
    role: 'assistant' as const,
    content: answer.content,
    createdAt: new Date().toISOString(),
  };
  const stored = messages.find((m) => m.role === 'user' && m.createdAt >= sent.sentAt) ?? {
    id: 'unstored',
    role: 'user' as const,
    content: sent.message,
    createdAt: sent.sentAt,
  };
  return { agentId, message: stored, reply, usage: usageOf(answer.usage) };
}

/** `thread`: a chat session's earlier turns, which then replace the agent's whole history as the context. */
export async function sendChatMessage(auth: AuthContext, agentId: string, message: string, thread?: Turn[], wakeBy?: WakeSource) {
  const [agent, access] = await Promise.all([getAgent(auth.userId, agentId), accountAccess(auth)]);
  if (!agent) throw noSuchAgent();
  requireActiveSubscription(access);
  return exchangeWith(auth.userId, agentId, message, thread, wakeBy);
}
