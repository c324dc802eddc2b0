import * as z from 'zod/mini';
import { AgentMessage, AgentStatus } from './agent-records';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId, SuccessTrue } from './common';
import { defineGroup, lazySchema } from './route';

export const CHAT_MESSAGE_MAX_CHARS = 32000;
export const CHAT_HISTORY_DEFAULT_LIMIT = 50;
export const CHAT_HISTORY_MAX_LIMIT = 200;

export const AGENT_GET_ACTIONS = ['health', 'sessions', 'session', 'memory', 'skills', 'credentials'] as const;

const ChatText = lazySchema(() =>
  z.string().check(z.minLength(1), z.maxLength(CHAT_MESSAGE_MAX_CHARS), z.describe(`at most ${CHAT_MESSAGE_MAX_CHARS} characters`)),
);

/** A skill credential name: an environment-variable-like identifier the agent runtime reads. */
export const CredentialName = lazySchema(() => z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'letters, digits and _, not starting with a digit')));

export const ChatSession = lazySchema(() =>
  z.object({
    id: z.string(),
    agentId: z.string(),
    title: z.string(),
    createdAt: IsoDate(),
    updatedAt: IsoDate(),
    messageCount: z.int().check(z.nonnegative()),
  }),
);

export const SESSION_TITLE_MAX_CHARS = 200;
export const CREDENTIAL_VALUE_MAX_CHARS = 4096;

const SkillConfig = lazySchema(() => z.record(z.string(), z.json()));

const InstalledSkill = lazySchema(() =>
  z.object({
    skillId: z.string(),
    agentId: z.string(),
    enabled: z.boolean(),
    config: SkillConfig().check(z.describe("the skill's settings on this agent")),
    installedAt: IsoDate(),
    updatedAt: IsoDate(),
  }),
);

const CredentialView = lazySchema(() =>
  z.object({
    agentId: z.string(),
    name: z.string(),
    preview: z.string().check(z.describe('a masked hint of the value (its last characters only when it is long enough to keep the rest secret)')),
    updatedAt: IsoDate(),
  }),
);

const Usage = lazySchema(() => z.object({ promptTokens: z.int(), completionTokens: z.int(), totalTokens: z.int() }));

/** `GET /api/agent` with no action: what the route offers. */
const EndpointListing = lazySchema(() =>
  z.object({
    endpoints: z.array(z.object({ method: z.enum(['GET', 'POST']), action: z.nullable(z.string()), description: z.string() })),
  }),
);

const AgentGetAnswer = lazySchema(() =>
  z.union([
    EndpointListing(),
    z.object({
      status: z.enum(['healthy', 'degraded', 'unavailable']).check(z.describe('healthy: every agent running; degraded: some; unavailable: none or no agents')),
      agents: z.array(z.object({ id: z.string(), name: z.string(), status: AgentStatus() })),
      timestamp: IsoDate(),
    }),
    z.object({
      sessions: z.array(ChatSession()),
      nextCursor: z.nullable(z.string()).check(z.describe('pass as `cursor` for the next page; null on the last page')),
    }),
    z.object({ session: ChatSession(), messages: z.array(AgentMessage()).check(z.describe('the newest `limit` messages of the session, oldest first')) }),
    z.object({ agentId: z.string(), memory: z.record(z.string(), z.json()), count: z.int() }),
    z.object({ skills: z.array(InstalledSkill()) }),
    z.object({ credentials: z.array(CredentialView()).check(z.describe('names, previews and update times only; values are never returned')) }),
  ]),
);

/** The answer of a chat whose agent was stopped for idleness and is still waking when the wait ends. */
const WakingAnswer = lazySchema(() =>
  z.object({
    status: z.literal('waking'),
    operationId: z.string().check(z.describe("the wake's operation (`instance.requested` with cause `wake` in `GET /api/instance/{userId}/events`)")),
    deliveryId: z.string().check(z.describe('the kept message: its `agent.delivered` event carries this id and the reply')),
    agentId: z.string(),
    sessionId: z.optional(z.string()).check(z.describe('`POST /api/agent`: the session the exchange is added to once delivered')),
  }),
);

const WAKE_NOTE =
  'An agent whose instance the platform stopped for idleness is woken by the message: the request waits for it (up to `WAKE_WAIT_SECONDS`, 20 s by default) and answers as usual; ' +
  "past that it answers 202 `{status: 'waking', operationId, deliveryId}` and the message is delivered exactly once when the instance runs, its reply then in the agent's history " +
  '(and the session) and in an `agent.delivered` event. A stop the owner asked for (or a spending cap) is never undone: 409 `AGENT_NOT_RUNNING` as before.';

const AgentAction = lazySchema(() =>
  z.discriminatedUnion('action', [
    z.strictObject({
      action: z.literal('chat'),
      agentId: z.optional(ResourceId()).check(z.describe("defaults to the session's agent, else the caller's most recently created agent")),
      sessionId: z.optional(ResourceId()).check(z.describe('continue this session; a new session is opened when omitted')),
      message: ChatText(),
    }),
    z.strictObject({
      action: z.literal('create-session'),
      agentId: ResourceId(),
      title: z.optional(z.string().check(z.minLength(1), z.maxLength(SESSION_TITLE_MAX_CHARS))),
    }),
    z.strictObject({
      action: z.literal('update-skill'),
      skillId: ResourceId(),
      enabled: z.optional(z.boolean()).check(z.describe('enable or disable the skill')),
      config: z.optional(SkillConfig()).check(z.describe("replace the skill's settings on the agent(s)")),
      agentId: z.optional(ResourceId()).check(z.describe('only this agent; every agent of the caller with the skill installed when omitted')),
    }),
    z.strictObject({
      action: z.literal('set-credential'),
      agentId: ResourceId(),
      name: CredentialName(),
      value: z.string().check(z.minLength(1), z.maxLength(CREDENTIAL_VALUE_MAX_CHARS), z.describe('stored envelope-encrypted; never returned or logged')),
    }),
  ]),
);

const Paging = lazySchema(() => ({
  agentId: ResourceId(),
  limit: z
    ._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(CHAT_HISTORY_MAX_LIMIT)), CHAT_HISTORY_DEFAULT_LIMIT)
    .check(z.describe(`${CHAT_HISTORY_DEFAULT_LIMIT} by default, at most ${CHAT_HISTORY_MAX_LIMIT}`)),
  before: z.optional(IsoDate()).check(z.describe('only messages created strictly before this time (the `nextBefore` of the previous page)')),
}));

export const agentChatContract = defineGroup({
  group: 'agent-chat',
  description: "Session-bound agent actions and chat with the caller's agents (spec 4.14). The user is always the authenticated caller.",
  dynamoOnly: false,
  // `POST /api/chat` with `stream: true` answers server-sent events (its Function URL twin streams them).
  streams: true,
  routes: [
    {
      operation: 'getAgentAction',
      method: 'GET',
      path: '/api/agent',
      auth: 'session',
      summary: "Read the caller's agent state by `action`; without `action`, list what this route offers.",
      description:
        'The user is always the authenticated caller: the query is strict, so a `userId` (or any unknown parameter) is refused with 400. ' +
        "An `agentId` or `sessionId` that is not the caller's answers 404 whatever the action.\n" +
        '- (none) → `{endpoints}`.\n' +
        "- `health` → `{status, agents, timestamp}` for the caller's agents.\n" +
        '- `sessions` → `{sessions, nextCursor}`: chat sessions, newest first, `limit` per page, then `cursor` = the previous `nextCursor` (`agentId` filters).\n' +
        "- `session` → `{session, messages}`: the newest `limit` messages, oldest first; needs `sessionId` (400 without, 404 when not the caller's).\n" +
        '- `memory` → `{agentId, memory, count}`; needs `agentId` (400 without, 404 when not owned).\n' +
        "- `skills` → `{skills}` installed on the caller's agents, with their settings (`agentId` filters; 404 when not owned).\n" +
        '- `credentials` → `{credentials}`: per-agent names, masked previews and update times, never values (`agentId` filters; 404 when not owned).',
      query: () =>
        z.strictObject({
          action: z.optional(z.enum(AGENT_GET_ACTIONS)),
          sessionId: z.optional(ResourceId()).check(z.describe('for `session`')),
          agentId: z.optional(ResourceId()).check(z.describe('for `memory` (required), `sessions`, `skills` and `credentials` (filter)')),
          limit: Paging().limit.check(
            z.describe(`for \`sessions\` and \`session\`: ${CHAT_HISTORY_DEFAULT_LIMIT} by default, at most ${CHAT_HISTORY_MAX_LIMIT}`),
          ),
          cursor: z.optional(ResourceId()).check(z.describe('for `sessions`: the `nextCursor` of the previous page')),
        }),
      responses: () => ({ 200: AgentGetAnswer(), 404: ErrorBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'postAgentAction',
      method: 'POST',
      path: '/api/agent',
      auth: 'session',
      // `chat` reaches the model layer: it shares the /api/chat budget.
      rateLimit: 'chat',
      summary: "Act on the caller's agents by `action`: chat, create a chat session, toggle a skill, set a skill credential.",
      description:
        'The user is always the authenticated caller: bodies are strict, so a `userId` (or any unknown field) is refused with 400.\n' +
        "- `chat` → `{sessionId, message, usage}` (`message`: the reply of the caller's running instance, through the model layer; stored in the session and the agent's history). " +
        "402 without an active subscription, 404 for an agent or session not the caller's, 400 when `sessionId` and `agentId` name different agents, 409 when the agent is not running, 502 when it does not answer. " +
        `${WAKE_NOTE}\n` +
        "- `create-session` → 201 `{session}`; 404 when the agent is not the caller's.\n" +
        '- `update-skill` → `{success, skills}` (the changed installations): sets `enabled` and/or replaces `config` (400 with neither); 404 when the skill is not installed on the named agent(s). ' +
        'A running instance reloads at once.\n' +
        "- `set-credential` → `{success, credential: {agentId, name, preview, updatedAt}}`; creates or replaces the named credential of the agent (404 when not the caller's). " +
        "The value is stored under envelope encryption and only ever delivered, decrypted, to the account's instance (its gateway-token-authenticated state read); a running instance reloads at once.",
      body: AgentAction,
      example: { action: 'chat', agentId: 'agt_7Hk2mQ9xLp', message: 'Draft a setlist for Friday night, 90 minutes of deep house.' },
      responses: () => ({
        200: z.union([
          z.object({ sessionId: z.string(), message: AgentMessage(), usage: Usage() }),
          z.extend(SuccessTrue(), { skills: z.array(InstalledSkill()) }),
          z.extend(SuccessTrue(), { credential: CredentialView() }),
        ]),
        201: z.object({ session: ChatSession() }),
        202: WakingAnswer(),
        402: ErrorBody(),
        404: ErrorBody(),
        409: ErrorBody(),
        502: ErrorBody(),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'getChatMessages',
      method: 'GET',
      path: '/api/chat',
      auth: 'session',
      rateLimit: 'chat',
      summary: "Message history with one of the caller's agents, newest first.",
      description: "404 when the agent is missing or not the caller's. Page with `before` = the previous answer's `nextBefore` (null on the last page).",
      query: () => z.object(Paging()),
      responses: () => ({
        200: z.object({
          agentId: z.string(),
          messages: z.array(AgentMessage()),
          hasMore: z.boolean(),
          nextBefore: z.nullable(IsoDate()),
        }),
        404: ErrorBody(),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'postChatMessage',
      method: 'POST',
      path: '/api/chat',
      auth: 'session',
      rateLimit: 'chat',
      summary: "Send a message to one of the caller's agents and get its reply.",
      description:
        "Both the message and the reply are stored in the agent's history. 402 without an active subscription (admins exempt), or `BUDGET_EXCEEDED` at a monthly spending cap; 404 when the agent is missing or not the caller's; " +
        `409 when the agent is not running; 502 when the agent does not answer. ${WAKE_NOTE}\n` +
        'With `stream: true` (or `Accept: text/event-stream`) the answer is `text/event-stream`, relayed as the agent writes it: `delta` `{content}` per piece, ' +
        'then `done` with the JSON answer `{agentId, message, reply, usage}`, or `error` `{error, code}` when the agent fails mid-answer. ' +
        'The refusals above keep their status; the exchange is stored and metered once, as without `stream`. ' +
        'The local stack streams the events as they come; API Gateway HTTP APIs buffer responses, so in AWS the same events arrive in one body unless sent to the streaming Function URL (see the README).',
      body: () =>
        z.strictObject({
          agentId: ResourceId(),
          message: ChatText(),
          stream: z.optional(z.boolean()).check(z.describe('true: answer server-sent events as the reply is written (see the description)')),
        }),
      example: { agentId: 'agt_7Hk2mQ9xLp', message: 'Which venues in Berlin hold 300 people?' },
      responses: () => ({
        200: z.object({ agentId: z.string(), message: AgentMessage().check(z.describe('the stored user message')), reply: AgentMessage(), usage: Usage() }),
        202: WakingAnswer(),
        402: ErrorBody(),
        404: ErrorBody(),
        409: ErrorBody(),
        502: ErrorBody(),
        ...commonErrorResponses(),
      }),
    },
  ],
});
