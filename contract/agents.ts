import * as z from 'zod/mini';
import { AgentConfig, AgentMessage, AgentStatus, VerificationType } from './agent-records';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId, ValidationErrorBody } from './common';
import { defineGroup, lazySchema } from './route';

// Defined apart so the groups that only show agents, messages or an agent's config (agent chat,
// instance, agent verification) do not bundle this whole group.
export * from './agent-records';

export const AGENT_MESSAGES_DEFAULT_LIMIT = 50;
export const AGENT_MESSAGES_MAX_LIMIT = 200;

/** Model choices of `POST /api/agents/provision`: the default model, a second general model, or `custom`. */
export const DEFAULT_AGENT_MODEL = 'openai/gpt-4o-mini';
export const SECOND_AGENT_MODEL = 'anthropic/claude-3-5-haiku';
export const ProvisionModel = lazySchema(() => z.enum([DEFAULT_AGENT_MODEL, SECOND_AGENT_MODEL, 'custom']));

const WsUrl = lazySchema(() => z.url({ protocol: /^wss?$/ }));
const HttpsUrl = lazySchema(() => z.url({ protocol: /^https$/ }));

/** Agent list form (spec 2.3). */
export const AgentListItem = lazySchema(() =>
  z.object({
    id: z.string(),
    name: z.string(),
    model: z.string(),
    status: AgentStatus(),
    websocketUrl: WsUrl(),
    createdAt: IsoDate(),
    updatedAt: IsoDate(),
  }),
);

/** Agent detail form (spec 2.4), plus the list-form fields a client needs to show the agent. */
export const AgentDetail = lazySchema(() =>
  z.object({
    id: z.string(),
    status: AgentStatus(),
    startedAt: z.nullable(IsoDate()).check(z.describe('when the instance last started; null while it has never run')),
    plan: z.string().check(z.describe('plan of the owning account')),
    subdomain: z.string(),
    url: HttpsUrl(),
    runtimeVersion: z.string().check(z.describe('version of the agent runtime engine')),
    verified: z.boolean(),
    verificationType: z.nullable(VerificationType()),
    attestationUid: z.nullable(z.string()),
    verifiedAt: z.nullable(IsoDate()),
    name: z.string(),
    model: z.string(),
    websocketUrl: WsUrl(),
    createdAt: IsoDate(),
    updatedAt: IsoDate(),
    paused: z
      .optional(
        z.object({
          reason: z
            .enum(['budget', 'loop'])
            .check(z.describe('`budget`: its spending cap; `loop`: the loop breaker (`agent.loop_detected`), named first when both hold it')),
          reasons: z
            .array(z.enum(['budget', 'loop']))
            .check(z.describe('every pause that holds the agent: each is lifted on its own (the cap raised, the loop breaker resumed)')),
          at: z.optional(IsoDate()),
          loop: z
            .optional(z.record(z.string(), z.unknown()))
            .check(
              z.describe("the loop breaker's evidence: kind, signature, call, count, window, spend; resume with `POST /api/agents/{id}/loop-breaker/resume`"),
            ),
        }),
      )
      .check(z.describe('only while the agent is paused: its metered calls are refused and its schedules skipped')),
    failureReason: z
      .optional(z.string())
      .check(z.describe('only when the status is `error`: why the agent or its instance failed (the last launch error, a health check that never passed...)')),
  }),
);

const NotApplicable = lazySchema(() => z.literal('N/A'));
const DecimalString = lazySchema(() => z.string().check(z.regex(/^\d+(\.\d+)?$/, 'must be a decimal number')));

/** Live agent stats (spec 2.7), read from the running instance. */
export const AgentStatsLive = lazySchema(() =>
  z.object({
    status: z.literal('ok'),
    stats: z.object({
      agentId: z.string(),
      cpu: z.string().check(z.regex(/^\d+(\.\d+)?%$/, 'must be a percentage such as `1.25%`')),
      memory: z.string().check(z.describe('used / limit, e.g. `120.5MiB / 2GiB`')),
      memoryPercent: z.string().check(z.describe('e.g. `5.88%`')),
      network: z.string().check(z.describe('in / out, e.g. `1.2kB / 3.4kB`')),
      uptime: z.number().check(z.nonnegative(), z.describe('milliseconds')),
      uptimeFormatted: z.string().check(z.describe('e.g. `3h 12m`')),
      status: z.string().check(z.describe('status the instance reports')),
      pids: z.string(),
      messagesProcessed: NotApplicable(),
      messagesPerHour: NotApplicable(),
      averageResponseTime: NotApplicable(),
      successRate: NotApplicable(),
      errorRate: NotApplicable(),
    }),
  }),
);

/** Fallback stats (spec 2.7) when the backend is unavailable: built from stored figures, never invented. */
export const AgentStatsMock = lazySchema(() =>
  z.object({
    status: z.literal('mock'),
    stats: z.object({
      agentId: z.string(),
      messagesProcessed: z.number().check(z.int(), z.nonnegative()),
      messagesPerHour: z.number().check(z.nonnegative()),
      averageResponseTime: z.number().check(z.nonnegative(), z.describe('milliseconds')),
      uptime: z.number().check(z.nonnegative(), z.describe('milliseconds')),
      successRate: DecimalString(),
      errorRate: DecimalString(),
      timestamp: IsoDate(),
    }),
  }),
);

export const AgentStats = lazySchema(() => z.discriminatedUnion('status', [AgentStatsLive(), AgentStatsMock()]));

export const ProvisionAgentBody = lazySchema(() =>
  z
    .strictObject({
      name: z.string().check(z.trim(), z.minLength(1, 'name is required'), z.maxLength(64)),
      model: z._default(ProvisionModel(), DEFAULT_AGENT_MODEL),
      config: z.optional(AgentConfig()),
      tier: z
        .optional(z.enum(['starter', 'pro', 'enterprise']))
        .check(z.describe('accepted for compatibility and ignored: the agent limit always comes from the account plan')),
    })
    .check(
      z.superRefine((body, ctx) => {
        if (body.model === 'custom' && body.config?.model === undefined) {
          ctx.addIssue({ code: 'custom', path: ['config', 'model'], message: 'config.model is required when model is custom' });
        }
      }),
    ),
);

const IdParams = lazySchema(() => z.strictObject({ id: ResourceId() }));

/**
 * Deprecated operations keep working (spec 4.3) and say so in every answer (RFC 9745
 * `Deprecation`, RFC 8594 `Sunset`, and a `Link` to the successor with rel="successor-version").
 */
export const AGENTS_DEPRECATED_SINCE = '2026-01-01T00:00:00Z';
export const AGENTS_SUNSET = '2027-07-01T00:00:00Z';
const deprecationNote = (successor: string) =>
  `Answers carry \`Deprecation: @${Date.parse(AGENTS_DEPRECATED_SINCE) / 1000}\` (RFC 9745), \`Sunset: ${new Date(AGENTS_SUNSET).toUTCString()}\` (RFC 8594) and \`Link: ${successor}; rel="successor-version"\` (path parameters filled in).`;

const ProvisionedAgentBody = lazySchema(() =>
  z.object({
    success: z.literal(true),
    agent: z.object({
      id: z.string(),
      name: z.string(),
      status: z.enum(['provisioning', 'running']),
      websocketUrl: WsUrl(),
      model: z.string(),
      createdAt: IsoDate(),
    }),
  }),
);

const AgentLimitBody = lazySchema(() =>
  z.looseObject({
    error: z.string(),
    code: z.literal('AGENT_LIMIT_REACHED'),
    current: z.number().check(z.int(), z.nonnegative(), z.describe('agents the account has')),
    limit: z.number().check(z.int(), z.nonnegative(), z.describe('agents the account plan allows')),
  }),
);

const SubscriptionRequiredBody = lazySchema(() => z.looseObject({ error: z.string(), code: z.enum(['SUBSCRIPTION_REQUIRED', 'PLAN_REQUIRED']) }));

const exampleConfig: AgentConfig = {
  systemPrompt: 'You are the booking assistant of a touring DJ. Answer promoters politely and never confirm a date without checking the calendar.',
  temperature: 0.7,
  maxTokens: 1024,
  model: DEFAULT_AGENT_MODEL,
  channels: { chatBot: true, communityBot: false, businessMessaging: true },
  skills: ['event-scheduler', 'venue-finder', 'calendar'],
  env: { TIMEZONE: 'Europe/London', DEFAULT_CURRENCY: 'GBP' },
};

export const agentsContract = defineGroup({
  group: 'agents',
  description: [
    'Agents of the calling account (spec 4.3), rate limited per caller by the `agents` scope (100 per minute).',
    '',
    'Agent status (spec section 3 leaves the exits of `stopped`, `error` and `active` open; this is the platform design):',
    '- `POST /api/agents/provision` creates the agent in `provisioning` and queues its launch.',
    "- `provisioning` → `running` once the account's instance answers its health check; → `error` when the launch fails (the agent's plan quota is released).",
    "- From then on the agent shows the status of the account's one instance, which runs all its agents: `running`, `stopped`,",
    '  `provisioning` while it restarts or updates, `error`. The transitions (start, stop, restart, update, repair, reset-memory) and',
    '  their guards are documented on the instance group; illegal ones answer 409.',
    '- `active` (shown only in the detail form) is never written; it is read as `running`.',
    '',
    "Ownership: an agent id that is not the caller's answers 404, exactly like a missing one.",
  ].join('\n'),
  dynamoOnly: false,
  routes: [
    {
      operation: 'listAgents',
      method: 'GET',
      path: '/api/agents',
      auth: 'optional',
      rateLimit: 'agents',
      summary: "List the caller's agents; without a session the list is empty (not 401).",
      description: 'A credential that is present but invalid is still refused with 401.',
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ agents: z.array(AgentListItem()), count: z.number().check(z.int(), z.nonnegative()), status: z.literal('ok') }),
      }),
    },
    {
      operation: 'listProvisionedAgents',
      method: 'GET',
      path: '/api/agents/provision',
      auth: 'session',
      rateLimit: 'agents',
      summary: "List the caller's agents in the provisioning view.",
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ success: z.literal(true), agents: z.array(AgentListItem()), count: z.number().check(z.int(), z.nonnegative()) }),
      }),
    },
    {
      operation: 'provisionAgent',
      method: 'POST',
      path: '/api/agents/provision',
      auth: 'session',
      // A client that timed out retries with the same key and gets the agent it created, not a second one.
      policy: { idempotent: true },
      rateLimit: 'agents',
      summary: 'Provision a new agent: checks the subscription and the plan agent limit, creates it in `provisioning` and queues the launch.',
      description: [
        'Requires an active subscription (402 `SUBSCRIPTION_REQUIRED`; `PLAN_REQUIRED` for the retired `free` plan) unless the caller is an admin.',
        'The agent limit comes from the account plan (`starter` 1, `pro` 3, `enterprise` 100, anything else 1; admins get an elevated limit);',
        'it is enforced in the same database transaction that creates the agent, so concurrent requests cannot exceed it (429 `AGENT_LIMIT_REACHED` with `current` and `limit`).',
        'The body `tier` is accepted for compatibility but NEVER used for the limit.',
        `\`model\` defaults to \`${DEFAULT_AGENT_MODEL}\`; \`custom\` takes the model from \`config.model\`, which is then required (400).`,
        'The launch is queued: the agent is `provisioning` until its instance answers its health check (then `running`), or `error` if the launch fails',
        '(its quota is then released). `websocketUrl` is final once the agent is `running`. 502 when the launch cannot be queued (nothing is kept).',
      ].join(' '),
      body: ProvisionAgentBody,
      example: { name: 'Tour Booking Assistant', model: DEFAULT_AGENT_MODEL, config: exampleConfig },
      responses: () => ({
        ...commonErrorResponses(),
        201: ProvisionedAgentBody(),
        402: SubscriptionRequiredBody(),
        429: z.union([AgentLimitBody(), ErrorBody()]),
        502: ErrorBody(),
      }),
    },
    {
      operation: 'getAgent',
      method: 'GET',
      path: '/api/agents/{id}',
      auth: 'session',
      rateLimit: 'agents',
      summary: 'Get one owned agent in detail form.',
      params: IdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ agent: AgentDetail(), status: z.literal('ok') }),
        404: ErrorBody(),
      }),
    },
    {
      operation: 'getAgentConfig',
      method: 'GET',
      path: '/api/agents/{id}/config',
      auth: 'session',
      rateLimit: 'agents',
      summary: "Read an owned agent's configuration.",
      params: IdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ config: AgentConfig() }),
        404: ErrorBody(),
        502: ErrorBody(),
      }),
    },
    {
      operation: 'updateAgentConfig',
      method: 'PUT',
      path: '/api/agents/{id}/config',
      auth: 'session',
      rateLimit: 'agents',
      summary: "Replace an owned agent's configuration and push it to the running instance.",
      description: [
        'The body is validated against AgentConfig (unknown fields refused), stored, and delivered to the running instance (it reloads its agents).',
        'PUT replaces the whole configuration: omitted fields return to the platform default.',
        'An instance that is not running gets it when it next starts. 502 when the running instance cannot be reached: the configuration is',
        'then stored but not yet in effect; it is delivered at the next start, restart or configuration change.',
      ].join(' '),
      params: IdParams,
      body: AgentConfig,
      example: exampleConfig,
      responses: () => ({
        ...commonErrorResponses(),
        400: z
          .union([ValidationErrorBody(), ErrorBody()])
          .check(z.describe('invalid body, or a fallback model outside the plan (`FALLBACK_MODEL_NOT_ALLOWED`)')),
        200: z.object({ success: z.literal(true), config: AgentConfig() }),
        404: ErrorBody(),
        502: ErrorBody(),
      }),
    },
    {
      operation: 'listAgentMessages',
      method: 'GET',
      path: '/api/agents/{id}/messages',
      auth: 'session',
      rateLimit: 'agents',
      summary: "Page through an owned agent's messages, newest first.",
      description: `\`limit\` defaults to ${AGENT_MESSAGES_DEFAULT_LIMIT} (at most ${AGENT_MESSAGES_MAX_LIMIT}), \`offset\` to 0 and counts from the newest message; \`total\` is the number of messages overall.`,
      params: IdParams,
      query: () =>
        z.object({
          limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(AGENT_MESSAGES_MAX_LIMIT)), AGENT_MESSAGES_DEFAULT_LIMIT),
          offset: z._default(z.coerce.number().check(z.int(), z.minimum(0)), 0),
        }),
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({
          messages: z.array(AgentMessage()),
          total: z.number().check(z.int(), z.nonnegative()),
          limit: z.number().check(z.int()),
          offset: z.number().check(z.int()),
          status: z.literal('ok'),
        }),
        404: ErrorBody(),
        502: ErrorBody(),
      }),
    },
    {
      operation: 'getAgentStats',
      method: 'GET',
      path: '/api/agents/{id}/stats',
      auth: 'session',
      rateLimit: 'agents',
      summary: 'Runtime stats of an owned agent: live (`status: ok`) or, when the backend is unavailable, the labelled fallback (`status: mock`).',
      description: 'The fallback is built from the figures the platform stores for the agent (message counts, uptime samples), never from random numbers.',
      params: IdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: AgentStats(),
        404: ErrorBody(),
      }),
    },
    {
      operation: 'createAgentDeprecated',
      method: 'POST',
      path: '/api/agents',
      auth: 'session',
      rateLimit: 'agents',
      deprecated: true,
      summary: 'Deprecated alias of `POST /api/agents/provision`: same body, same checks, same answers.',
      description: [
        'Maps onto `POST /api/agents/provision` (subscription, plan agent limit, queued launch; 201 with the provisioned agent).',
        deprecationNote('</api/agents/provision>'),
      ].join(' '),
      body: ProvisionAgentBody,
      example: { name: 'Tour Booking Assistant', model: DEFAULT_AGENT_MODEL },
      responses: () => ({
        ...commonErrorResponses(),
        201: ProvisionedAgentBody(),
        402: SubscriptionRequiredBody(),
        429: z.union([AgentLimitBody(), ErrorBody()]),
        502: ErrorBody(),
      }),
    },
    {
      operation: 'updateAgentDeprecated',
      method: 'PUT',
      path: '/api/agents/{id}',
      auth: 'session',
      rateLimit: 'agents',
      deprecated: true,
      summary: "Deprecated alias of `PUT /api/agents/{id}/config`: replaces the owned agent's configuration.",
      description: [
        'Maps onto `PUT /api/agents/{id}/config`: the body is an AgentConfig, stored and delivered to the running instance (502 when it cannot be reached).',
        deprecationNote('</api/agents/{id}/config>'),
      ].join(' '),
      params: IdParams,
      body: AgentConfig,
      example: { systemPrompt: 'Be brief.', temperature: 0.4 },
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ success: z.literal(true), config: AgentConfig() }),
        404: ErrorBody(),
        502: ErrorBody(),
      }),
    },
    {
      operation: 'deleteAgentDeprecated',
      method: 'DELETE',
      path: '/api/agents/{id}',
      auth: 'session',
      rateLimit: 'agents',
      deprecated: true,
      summary: 'Deprecated: deletes an owned agent (its unit of the plan quota comes back); the lifecycle endpoints are the successor.',
      description: [
        "Maps onto the agent's removal from the account's instance: the agent, its message history and its memory are deleted, its plan quota unit",
        'released, and a running instance reloads its agents so it stops serving it. Stopping the whole instance is `POST /api/instance/{userId}/stop`.',
        deprecationNote('</api/instance/{userId}/stop>'),
      ].join(' '),
      params: IdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ success: z.literal(true), id: z.string(), deleted: z.literal(true) }),
        404: ErrorBody(),
      }),
    },
  ],
});
