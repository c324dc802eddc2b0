import type { AuthContext } from '../../shared/auth/authenticate';
import { recordActivity } from '../../shared/db/idle-watch';
import { runtimeRequest, RuntimeUnreachableError } from '../../shared/adapters/launcher';
import { accountAccess, requireActiveSubscription } from '../../shared/billing/entitlements';
import { config } from '../../shared/config';
import { getAgent } from '../../shared/db/agents';
import { messagesBefore } from '../../shared/db/chat-history';
import { gatewayToken, getInstance } from '../../shared/db/instances';
import { conflict, HttpError, notFound } from '../../shared/http/errors';

/**
 * Chat with one of the caller's agents: the message goes to the account's running instance, whose
 * runtime answers through the platform's model layer (plan gate and metering included) and stores
 * the exchange in the agent's history.
 */

export async function chatHistory(auth: AuthContext, agentId: string, limit: number, before?: string) {
  if (!(await getAgent(auth.userId, agentId))) throw notFound('no such agent');
  return { agentId, ...(await messagesBefore(auth.userId, agentId, limit, before)) };
}

export const usageOf = (u: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | undefined) => ({
  promptTokens: u?.prompt_tokens ?? 0,
  completionTokens: u?.completion_tokens ?? 0,
  totalTokens: u?.total_tokens ?? (u?.prompt_tokens ?? 0) + (u?.completion_tokens ?? 0),
});

/**
 * One message to the agent's runtime on the account's running instance (409 when it is not
 * running); its answer and usage. Also how inbound channel messages reach the agent.
 */
export async function askAgent(userId: string, agentId: string, message: string, thread?: { role: 'user' | 'assistant'; content: string }[]) {
  const [agent, instance] = await Promise.all([getAgent(userId, agentId), getInstance(userId)]);
  if (!agent) throw notFound('no such agent');
  // Chats, agent calls, channel messages and scheduled runs all come through here: idle auto-stop's activity.
  await recordActivity(userId);
  const endpoint = instance?.handle?.endpoint;
  if (instance?.status !== 'running' || !endpoint || agent.phase !== 'ready') {
    throw conflict(`the agent is not running (instance ${instance?.status ?? 'not provisioned'}); start it first`, 'AGENT_NOT_RUNNING');
  }
  let answer;
  try {
    answer = await runtimeRequest(endpoint, await gatewayToken(userId), `/agents/${encodeURIComponent(agentId)}/chat`, {
      method: 'POST',
      body: { content: message, ...(thread ? { thread } : {}) },
      timeoutMs: config().model.timeoutMs + 5_000,
    });
  } catch (err) {
    if (err instanceof RuntimeUnreachableError) throw new HttpError(502, 'the agent did not answer', 'BACKEND_UNAVAILABLE');
    throw err;
  }
  const body = answer.body as { content?: string; usage?: Parameters<typeof usageOf>[0]; error?: string; code?: string } | undefined;
  if (answer.status !== 200 || typeof body?.content !== 'string') {
    // A spending cap the agent's model call hit is the caller's to lift, not a failure of the agent.
    const status = body?.code === 'BUDGET_EXCEEDED' ? 402 : 502;
    throw new HttpError(status, body?.error ?? 'the agent did not answer', body?.code ?? 'BACKEND_UNAVAILABLE');
  }
  return { content: body.content, usage: body.usage };
}

/** `thread`: a chat session's earlier turns, which then replace the agent's whole history as the context. */
export async function sendChatMessage(auth: AuthContext, agentId: string, message: string, thread?: { role: 'user' | 'assistant'; content: string }[]) {
  const [agent, access] = await Promise.all([getAgent(auth.userId, agentId), accountAccess(auth)]);
  if (!agent) throw notFound('no such agent');
  requireActiveSubscription(access);
  const sentAt = new Date().toISOString();
  const body = await askAgent(auth.userId, agentId, message, thread);
  return storedExchange(auth.userId, agentId, { message, sentAt }, body);
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
