import type { AuthContext } from '#domain/auth/authenticate';
import { runtimeRequest } from '#adapters/launcher';
import { listAgentCredentials, setAgentCredential } from '#data/agent-credentials';
import { agentStatus, getAgent, listAgents } from '#data/agents';
import { appendSessionMessages, createChatSession, getChatSession, listChatSessions, sessionMessages } from '#data/chat-sessions';
import { gatewayToken, getInstance } from '#data/instances';
import { listInstalledSkills, updateInstalledSkill, type InstalledSkill } from '#data/installed-skills';
import { readAgentMemory } from '#data/memory';
import { invalid, notFound } from '#platform/errors';
import { reply } from '#http/reply';
import { logger } from '#platform/logger';
import { sendChatMessage, StillWakingError } from '#domain/chat/chat';
import { keepWhileWaking } from './chat';

/**
 * `/api/agent` (spec 4.14): the caller's agents by action. The user is always the session's: every
 * read and write is in the caller's partition, so another user's agent or session is simply absent (404).
 */

type GetQuery = { action?: string; sessionId?: string; agentId?: string; limit: number; cursor?: string };

const ENDPOINTS = [
  { method: 'GET', action: null, description: 'this listing' },
  { method: 'GET', action: 'health', description: 'agent status' },
  { method: 'GET', action: 'sessions', description: 'chat sessions, newest first' },
  { method: 'GET', action: 'session', description: 'a session and its messages' },
  { method: 'GET', action: 'memory', description: "an agent's memory" },
  { method: 'GET', action: 'skills', description: 'installed skills' },
  { method: 'GET', action: 'credentials', description: 'credential names and previews' },
  { method: 'POST', action: 'chat', description: 'message an agent' },
  { method: 'POST', action: 'create-session', description: 'open a chat session' },
  { method: 'POST', action: 'update-skill', description: 'enable, disable or configure a skill' },
  { method: 'POST', action: 'set-credential', description: 'set an agent secret' },
] as const;

async function requireOwnedAgent(userId: string, agentId: string | undefined) {
  if (agentId && !(await getAgent(userId, agentId))) throw notFound('no such agent');
}

async function health(userId: string) {
  const [agents, instance] = await Promise.all([listAgents(userId), getInstance(userId)]);
  const views = agents.map((a) => ({ id: a.id, name: a.name, status: agentStatus(a, instance?.status) }));
  const running = views.filter((a) => a.status === 'running').length;
  const status = running === 0 ? 'unavailable' : running === views.length ? 'healthy' : 'degraded';
  return { status, agents: views, timestamp: new Date().toISOString() } as const;
}

async function session(userId: string, sessionId: string | undefined, limit: number) {
  if (!sessionId) throw invalid('`sessionId` is required for action=session');
  const found = await getChatSession(userId, sessionId);
  if (!found) throw notFound('no such session');
  return { session: found, messages: await sessionMessages(userId, sessionId, limit) };
}

async function memory(userId: string, agentId: string | undefined) {
  if (!agentId) throw invalid('`agentId` is required for action=memory');
  const found = await readAgentMemory(userId, agentId);
  if (!found) throw notFound('no such agent');
  return { agentId, memory: found.memory, count: found.count };
}

/** Every action answers 404 for an `agentId` that is not the caller's, the listing included, so no action can probe ids. */
export async function readAgentAction(auth: AuthContext, query: GetQuery) {
  const { userId } = auth;
  await requireOwnedAgent(userId, query.agentId);
  if (query.sessionId && query.action !== 'session' && !(await getChatSession(userId, query.sessionId))) throw notFound('no such session');
  switch (query.action) {
    case undefined:
      return { endpoints: ENDPOINTS.map((e) => ({ ...e })) };
    case 'health':
      return health(userId);
    case 'sessions':
      return listChatSessions(userId, { agentId: query.agentId, limit: query.limit, cursor: query.cursor });
    case 'session':
      return session(userId, query.sessionId, query.limit);
    case 'memory':
      return memory(userId, query.agentId);
    case 'skills':
      return { skills: await listInstalledSkills(userId, query.agentId) };
    case 'credentials':
      return { credentials: await listAgentCredentials(userId, query.agentId) };
    default:
      throw invalid(`unknown action ${query.action}`);
  }
}

/**
 * A running instance reloads its agents (skills and credentials included). The change is stored
 * either way: an instance that cannot be reached now loads it at its next start.
 */
async function deliverToInstance(userId: string, what: string): Promise<void> {
  const instance = await getInstance(userId);
  const endpoint = instance?.handle?.endpoint;
  if (instance?.status !== 'running' || !endpoint) return;
  try {
    const res = await runtimeRequest(endpoint, await gatewayToken(userId), '/reload', { method: 'POST', timeoutMs: 10_000 });
    if (res.status !== 200) logger().warn(`the instance did not reload its ${what}`, { status: res.status });
  } catch (err) {
    logger().warn(`the instance could not be asked to reload its ${what}`, { error: (err as Error).message });
  }
}

const SESSION_TITLE_FROM_MESSAGE_CHARS = 60;
const titleFrom = (message: string) => {
  const line = message.trim().split('\n')[0]!.trim();
  return line.length > SESSION_TITLE_FROM_MESSAGE_CHARS ? `${line.slice(0, SESSION_TITLE_FROM_MESSAGE_CHARS - 1)}…` : line || 'New session';
};

async function newestAgentId(userId: string): Promise<string> {
  const agents = await listAgents(userId);
  const newest = agents.reduce<(typeof agents)[number] | undefined>((a, b) => (!a || String(b.createdAt) > String(a.createdAt) ? b : a), undefined);
  if (!newest) throw notFound('no agent to chat with');
  return newest.id;
}

/** A session's newest turns sent as the context of its next message (the runtime's history limit). */
const SESSION_CONTEXT_MESSAGES = 50;

/**
 * The message goes through POST /api/chat's path (running instance, model layer), with the
 * session's own earlier turns as the context: each session is its own conversation, and a new one
 * starts fresh. The exchange is then added to the session, opened only once the agent has answered.
 */
async function chat(auth: AuthContext, body: { agentId?: string; sessionId?: string; message: string }) {
  const existing = body.sessionId ? await getChatSession(auth.userId, body.sessionId) : undefined;
  if (body.sessionId && !existing) throw notFound('no such session');
  if (existing && body.agentId && body.agentId !== existing.agentId) throw invalid('the session belongs to another agent', 'SESSION_AGENT_MISMATCH');
  const agentId = existing?.agentId ?? body.agentId ?? (await newestAgentId(auth.userId));
  const earlier = existing ? await sessionMessages(auth.userId, existing.id, SESSION_CONTEXT_MESSAGES) : [];
  const thread = earlier.flatMap(({ role, content }) => (role === 'system' ? [] : [{ role, content }]));
  let exchange: Awaited<ReturnType<typeof sendChatMessage>>;
  try {
    exchange = await sendChatMessage(auth, agentId, body.message, thread, 'agent-chat');
  } catch (err) {
    if (!(err instanceof StillWakingError)) throw err;
    // The session is opened now, so the 202 names where the exchange will appear once delivered.
    const session = existing ?? (await createChatSession(auth.userId, agentId, titleFrom(body.message)));
    if (!session) throw notFound('no such agent');
    return keepWhileWaking(auth.userId, err, { agentId, message: body.message, source: 'agent-chat', sessionId: session.id, thread });
  }
  const target = existing ?? (await createChatSession(auth.userId, agentId, titleFrom(body.message)));
  if (!target || !(await appendSessionMessages(auth.userId, target.id, [exchange.message, exchange.reply]))) throw notFound('no such session');
  return { sessionId: target.id, message: exchange.reply, usage: exchange.usage };
}

async function updateSkill(userId: string, body: { skillId: string; enabled?: boolean; config?: Record<string, unknown>; agentId?: string }) {
  if (body.enabled === undefined && body.config === undefined) throw invalid('give `enabled`, `config` or both');
  await requireOwnedAgent(userId, body.agentId);
  const installs = (await listInstalledSkills(userId, body.agentId)).filter((s) => s.skillId === body.skillId);
  const change = { enabled: body.enabled, config: body.config };
  const updated = (await Promise.all(installs.map((s) => updateInstalledSkill(userId, s.agentId, s.skillId, change)))).filter(
    (s): s is InstalledSkill => s !== undefined,
  );
  if (!updated.length) throw notFound(`the skill ${body.skillId} is not installed on ${body.agentId ? 'that agent' : 'any of your agents'}`);
  await deliverToInstance(userId, 'skills');
  return { success: true as const, skills: updated };
}

async function setCredential(userId: string, body: { agentId: string; name: string; value: string }) {
  const credential = await setAgentCredential(userId, body.agentId, body.name, body.value);
  if (!credential) throw notFound('no such agent');
  await deliverToInstance(userId, 'credentials');
  return { success: true as const, credential };
}

type PostBody =
  | { action: 'chat'; agentId?: string; sessionId?: string; message: string }
  | { action: 'create-session'; agentId: string; title?: string }
  | { action: 'update-skill'; skillId: string; enabled?: boolean; config?: Record<string, unknown>; agentId?: string }
  | { action: 'set-credential'; agentId: string; name: string; value: string };

export async function runAgentAction(auth: AuthContext, body: PostBody) {
  switch (body.action) {
    case 'chat':
      return chat(auth, body);
    case 'create-session': {
      const created = await createChatSession(auth.userId, body.agentId, body.title ?? 'New session');
      if (!created) throw notFound('no such agent');
      return reply.created({ session: created });
    }
    case 'update-skill':
      return updateSkill(auth.userId, body);
    case 'set-credential':
      return setCredential(auth.userId, body);
  }
}
