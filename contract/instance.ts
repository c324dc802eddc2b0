import * as z from 'zod/mini';
import { AgentConfig, AgentMessage, AgentStatus } from './agent-records';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId, SuccessTrue } from './common';
import { defineGroup, lazySchema } from './route';
import { RuntimeChatMessage, runtimeAuth } from './runtime-model';

/** The statuses `waitFor` accepts: all but `active`. */
const WaitableStatus = lazySchema(() =>
  z.enum(AgentStatus().options.filter((status): status is Exclude<z.infer<ReturnType<typeof AgentStatus>>, 'active'> => status !== 'active')),
);
const UserIdParams = lazySchema(() => z.strictObject({ userId: ResourceId() }));

/**
 * Failure body of the lifecycle endpoints (spec 4.4). Loose so the pipeline's own answers
 * (`{error, code}` with `AUTH_REQUIRED` / `TOKEN_INVALID`) can carry the same two fields.
 */
export const LifecycleFailureBody = lazySchema(() =>
  z.looseObject({
    success: z.literal(false),
    status: z.literal('error'),
    error: z.optional(z.string()),
    code: z.optional(z.string()),
  }),
);

const lifecycleFailures = lazySchema(
  () =>
    ({
      401: LifecycleFailureBody(),
      403: LifecycleFailureBody(),
      404: LifecycleFailureBody(),
      500: LifecycleFailureBody(),
      502: LifecycleFailureBody(),
    }) as const,
);

/** Repair and reset-memory return the backend's answer directly (spec 4.4), e.g. `{success, message}`. */
export const BackendActionBody = lazySchema(() =>
  z.looseObject({
    success: z.literal(true),
    message: z.string(),
    status: z.optional(AgentStatus()).check(z.describe('status after the action, when the backend reports it')),
    current: z.optional(AgentStatus()).check(z.describe('where the instance is now')),
    operationId: z.optional(z.string()).check(z.describe('the operation that produced the current state')),
  }),
);

export const UpdateInstanceBody = lazySchema(() =>
  z.strictObject({
    runtimeVersion: z
      .optional(z.string().check(z.regex(/^[0-9A-Za-z][0-9A-Za-z._+-]{0,63}$/, 'must be a runtime version such as 2025.6.1')))
      .check(z.describe('runtime engine version to move to; omitted means the latest the operator has approved')),
    image: z
      .optional(z.string().check(z.regex(/^[a-z0-9][a-z0-9._/:@-]{0,254}$/, 'must be a container image reference')))
      .check(z.describe('container image to run; must be one of the images the operator has approved, else 400 `IMAGE_NOT_ALLOWED`')),
  }),
);

/** Instance record (spec 2.5). */
export const InstanceRecord = lazySchema(() =>
  z.object({
    userId: z.string(),
    status: AgentStatus(),
    startedAt: z.nullable(IsoDate()).check(z.describe('null while the instance has never run')),
    subdomain: z.string(),
    url: z.url({ protocol: /^https$/ }),
    plan: z.string(),
    runtimeVersion: z.string(),
    failureReason: z.optional(z.string()).check(z.describe('only when the status is `error`: why the last launch or health check failed')),
  }),
);
/** The instance as `GET /api/instance/{userId}` answers it: the record, and with `waitFor` whether the status was reached. */
export const InstanceView = lazySchema(() =>
  z.extend(InstanceRecord(), {
    reached: z.optional(z.boolean()).check(z.describe('only with `waitFor`: whether the instance reached that status before the timeout')),
  }),
);

/** Instance stats (spec 2.6). */
export const InstanceStats = lazySchema(() =>
  z.object({
    userId: z.string(),
    cpu: z.string().check(z.regex(/^\d+(\.\d+)?%$/, 'must be a percentage such as `1.25%`')),
    memory: z.string().check(z.describe('memory in use, e.g. `120.5MiB`')),
    status: AgentStatus(),
    plan: z.string(),
    runtimeVersion: z.string(),
  }),
);

/** What a starting runtime loads: every agent with its configuration, memory and recent history. */
export const RuntimeAgentState = lazySchema(() =>
  z.object({
    id: z.string(),
    name: z.string(),
    model: z.string().check(z.describe('the model the platform answers this agent with')),
    config: AgentConfig(),
    memory: z.record(z.string(), z.json()),
    messages: z.array(AgentMessage()).check(z.describe('the most recent messages, oldest first')),
    skills: z
      .array(z.object({ skillId: z.string(), enabled: z.boolean(), config: z.record(z.string(), z.json()) }))
      .check(z.describe('the skills installed on the agent; the runtime calls them at `POST /api/instance/{userId}/runtime/agents/{agentId}/skills/{skill}`')),
    credentials: z
      .record(z.string(), z.string())
      .check(
        z.describe("the agent's credentials (name → value, set with `POST /api/agent` action `set-credential`): decrypted only for this gateway-token read"),
      ),
  }),
);

export const RUNTIME_HISTORY_MESSAGES = 50;

const RuntimeExchangeBody = lazySchema(() =>
  z.strictObject({
    agentId: ResourceId(),
    messages: z.array(RuntimeChatMessage()).check(z.minLength(1), z.maxLength(10)),
    responseMs: z.optional(z.number().check(z.int(), z.minimum(0), z.maximum(3_600_000))).check(z.describe('time the model took to answer')),
    failed: z.optional(z.boolean()).check(z.describe('the exchange ended without an answer')),
  }),
);

const transitionDescription = (what: string) =>
  [
    what,
    'Accepted from every state (see the state machine of this group): an operation that arrives while a launch is in flight supersedes it.',
    "The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance; 502 when the provisioning queue is unreachable.",
    "The success body is the spec's plus `current` (the status the instance is in now) and `operationId` (carried by the events of this operation);",
    'wait for the outcome with `GET /api/instance/{userId}?waitFor=running`. Every failure answers `{success: false, status: "error", error?}`.',
  ].join(' ');

/** The instance state machine (spec section 3: start, stop, restart and update from any state; the exits it leaves open are the platform design). */
export const INSTANCE_STATE_MACHINE = [
  'One instance per account runs every agent of the account. Instance statuses: `provisioning`, `running`, `stopped`, `error`',
  '(`active` is never written; it is read as `running`).',
  '| From | Operation | To |',
  '|---|---|---|',
  '| (none) | first agent provisioned (`POST /api/agents/provision`, `POST /api/provision`) | `provisioning` |',
  '| `provisioning` | the launched instance answers its health check (in AWS also its ECS task reports RUNNING) | `running` |',
  '| `provisioning` | never healthy within the readiness window, or every delivery of the launch failed (dead-letter queue) | `error`; agents still provisioning become `error` and their quota is released |',
  '| `running` | the heartbeat finds it unhealthy | `error` |',
  '| `stopped`, `error` | start (also a new agent provisioned on it) | `provisioning` → `running` |',
  '| `provisioning`, `running` | start | unchanged: it is already on its way to (or at) `running`; the answer carries the operation in flight |',
  '| `provisioning`, `running`, `error` | stop | `stopped` (memory, skills, configuration kept; an in-flight launch is superseded and its process stopped) |',
  '| `stopped` | stop | unchanged |',
  '| any | restart, repair | `provisioning` → `running` (an in-flight launch is superseded; repair recreates on the same image) |',
  '| any | update | `provisioning` → `running` on the new image; if it never gets healthy the previous image is relaunched (`running` with `rolledBack`), if that fails too, `error` |',
  '| `provisioning`, `running` | reset-memory | memory wiped, then `provisioning` → `running` without it (an in-flight launch is superseded) |',
  '| `stopped`, `error` | reset-memory | memory wiped, status unchanged |',
  'Every transition that changes the instance gives it a new generation and an operation id. A launch whose generation is no longer',
  'current is stale: it stops its process and writes nothing (event `instance.superseded`), so the newest operation wins.',
  'Concurrency: a transition is one conditional write on the status and generation read just before it, so concurrent calls settle in the',
  'database in some order and the instance ends where the last written operation leads; 20 concurrent `start` calls on a stopped',
  'instance launch it once (the first writes, the others find it `provisioning` and join that operation: same `operationId`).',
  'start, restart and update answer `status: "running"` (the status the instance is moving to, as the spec writes it) with `current`',
  '(where it is now, e.g. `provisioning`); `GET /api/instance/{userId}?waitFor=running&timeout=25` answers once it is there.',
  'An agent shows `provisioning` until its first launch, `error` if that failed, and afterwards the status of the instance.',
  "Every step is in the event log (`GET /api/instance/{userId}/events`) and sent to the account's webhook endpoints:",
  '`instance.requested`, `instance.launching`, `instance.running`, `instance.unhealthy`, `instance.stopped`, `instance.error`,',
  '`instance.superseded`, `instance.rolled_back`, `agent.running`, `agent.error`.',
].join('\n');

const OperationProgress = lazySchema(() => ({
  current: AgentStatus().check(z.describe('where the instance is now (e.g. `provisioning` while a start is launching it)')),
  operationId: z.string().check(z.describe('the operation that produced the current state; its events carry the same id')),
}));
const transitionAnswer = <S extends 'running' | 'stopped'>(status: S) =>
  z.object({ success: z.literal(true), status: z.literal(status), ...OperationProgress() });

/** How long `waitFor` may hold a request: under API Gateway's 29 s integration timeout. */
export const MAX_WAIT_SECONDS = 25;

/** One stored lifecycle event (the event log and the webhook `data` carry the same fields). */
export const LifecycleEventRecord = lazySchema(() =>
  z.object({
    id: z.string(),
    type: z
      .string()
      .check(
        z.describe(
          '`instance.requested`, `instance.launching`, `instance.running`, `instance.unhealthy`, `instance.stopped`, `instance.error`, `instance.superseded`, `instance.rolled_back`, `agent.running`, `agent.error`, `model.failover`, `model.restored`, `agent.loop_detected`, budget and schedule events',
        ),
      ),
    at: IsoDate(),
    cause: z
      .string()
      .check(
        z.describe(
          "`user`, `provisioner`, `health-check`, `heartbeat`, `dead-letter`, `account-deletion`, `self-heal` (a relaunch after an unexpected exit), `reconciler` (stranded work taken over), `budget`, `schedule` or `idle` (idle auto-stop; the event's reason is `idle`)",
        ),
      ),
    operationId: z.optional(z.string()),
    op: z.optional(z.string()).check(z.describe('the lifecycle operation: `launch`, `start`, `stop`, `restart`, `update`, `repair`, `reset-memory`')),
    generation: z.optional(z.number().check(z.int())),
    status: z.optional(z.string()).check(z.describe('status after the event')),
    reason: z.optional(z.string()),
    agentId: z.optional(z.string()),
    image: z.optional(z.string()),
    runtimeVersion: z.optional(z.string()),
    details: z
      .optional(z.record(z.string(), z.unknown()))
      .check(
        z.describe(
          'what the event is about, by type: budget events the scope, cap and spend; schedule events the schedule and run; `model.failover` and `model.restored` the `model`, its `fallback` and the `cause`; `agent.loop_detected` the evidence',
        ),
      ),
  }),
);

export const instanceContract = defineGroup({
  group: 'instance',
  description: [
    "Lifecycle of the caller's agent instance (spec 4.4): session required, the path `userId` must be the caller (403 otherwise),",
    'rate limited by the `instance` scope (30 per minute). Lifecycle failures carry `{success: false, status: "error"}` (plus `error`, and `code`).',
    'The `/runtime/*` routes are the platform side of the agent runtime: called by instances with their gateway token, never by users.',
    '',
    INSTANCE_STATE_MACHINE,
  ].join('\n'),
  dynamoOnly: false,
  routes: [
    {
      operation: 'startInstance',
      method: 'POST',
      path: '/api/instance/{userId}/start',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Start the instance (from any state → `running`; a no-op while it starts or runs).',
      description: transitionDescription(
        'Starts the instance; while it is already starting or running the answer carries the operation in flight. ' +
          'Websocket clients wake an agent stopped for idleness this way before connecting: start, then `GET /api/instance/{userId}?waitFor=running` (chats wake it by themselves).',
      ),
      params: UserIdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: transitionAnswer('running'),
        ...lifecycleFailures(),
      }),
    },
    {
      operation: 'stopInstance',
      method: 'POST',
      path: '/api/instance/{userId}/stop',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Stop the instance (from any state → `stopped`).',
      description: transitionDescription('Stops the running instance; memory and configuration are kept.'),
      params: UserIdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: transitionAnswer('stopped'),
        ...lifecycleFailures(),
      }),
    },
    {
      operation: 'restartInstance',
      method: 'POST',
      path: '/api/instance/{userId}/restart',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Restart the instance (from any state → `provisioning` → `running`).',
      description: transitionDescription('Relaunches the instance; memory and installed skills are delivered again, so nothing is lost.'),
      params: UserIdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: transitionAnswer('running'),
        ...lifecycleFailures(),
      }),
    },
    {
      operation: 'updateInstance',
      method: 'POST',
      path: '/api/instance/{userId}/update',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Update the instance image / runtime version and relaunch it (from any state → `provisioning` → `running`; rolled back if never healthy).',
      description: transitionDescription(
        'Triggers an image update on the backend. The optional body picks a runtime version or an operator-approved image; an empty or absent body moves to the latest approved version.',
      ),
      params: UserIdParams,
      body: () => z.optional(UpdateInstanceBody()),
      example: { runtimeVersion: '2025.6.1' },
      responses: () => ({
        ...commonErrorResponses(),
        200: transitionAnswer('running'),
        400: z.union([commonErrorResponses()[400], z.looseObject({ error: z.string(), code: z.literal('IMAGE_NOT_ALLOWED') })]),
        ...lifecycleFailures(),
      }),
    },
    {
      operation: 'repairInstance',
      method: 'POST',
      path: '/api/instance/{userId}/repair',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Repair the instance (from any state → `provisioning` → `running`); the backend answer is returned as is.',
      description: transitionDescription('Replaces a broken or failed instance with a fresh one carrying the same memory, skills and configuration.'),
      params: UserIdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: BackendActionBody(),
        ...lifecycleFailures(),
      }),
    },
    {
      operation: 'resetInstanceMemory',
      method: 'POST',
      path: '/api/instance/{userId}/reset-memory',
      auth: 'session',
      // A retried reset does not relaunch the instance a second time.
      policy: { idempotent: true },
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary:
        "Clear the memory of the caller's agents; a running or starting instance relaunches to drop its copy, others keep their status. The backend answer is returned as is.",
      description: transitionDescription(
        "Deletes every stored memory entry (the key-value memory of spec 2.11) of the account's agents and ends the conversation the runtime replays into " +
          'prompts: the messages so far stay stored and readable (`GET /api/agents/{id}/messages`, `/logs`) but are no longer sent to the model. ' +
          'A running instance is told at once (its agents forget their memory and conversation), then relaunches.',
      ),
      params: UserIdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: BackendActionBody(),
        ...lifecycleFailures(),
      }),
    },
    {
      operation: 'getInstance',
      method: 'GET',
      path: '/api/instance/{userId}',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: "Read the caller's instance record; optionally wait until it reaches a status.",
      description: [
        "The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance.",
        `With \`waitFor=<status>\` the answer is held until the instance is in that status or \`timeout\` seconds (1 to ${MAX_WAIT_SECONDS}, default ${MAX_WAIT_SECONDS}) pass,`,
        "whichever comes first; then the record carries `reached` (true when it got there). Like Fly Machines' `wait`: use it instead of polling.",
      ].join(' '),
      params: UserIdParams,
      query: () =>
        z.strictObject({
          waitFor: z.optional(WaitableStatus()).check(z.describe('the status to wait for')),
          timeout: z
            .optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(MAX_WAIT_SECONDS)))
            .check(z.describe(`seconds to wait at most (default ${MAX_WAIT_SECONDS})`)),
        }),
      responses: () => ({
        ...commonErrorResponses(),
        200: InstanceView(),
        404: ErrorBody(),
        502: ErrorBody(),
      }),
    },
    {
      operation: 'listInstanceEvents',
      method: 'GET',
      path: '/api/instance/{userId}/events',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: "The lifecycle event log of the caller's instance and agents, oldest first.",
      description: [
        "Every transition with its time, operation id and cause (kept 90 days). The path `userId` must be the caller's own id (403 otherwise).",
        '`cursor` continues where the previous page ended (null on the last page).',
      ].join(' '),
      params: UserIdParams,
      query: () =>
        z.strictObject({
          limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100)), 50).check(z.describe('events per page (default 50)')),
          cursor: z.optional(z.string().check(z.maxLength(2048))).check(z.describe('the `cursor` of the previous page')),
        }),
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ events: z.array(LifecycleEventRecord()), cursor: z.nullable(z.string()) }),
      }),
    },
    {
      operation: 'getInstanceStats',
      method: 'GET',
      path: '/api/instance/{userId}/stats',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: "Read the caller's instance CPU and memory figures.",
      description: "The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance; 502 when the backend is unreachable.",
      params: UserIdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: InstanceStats(),
        404: ErrorBody(),
        502: ErrorBody(),
      }),
    },
    {
      operation: 'getInstanceToken',
      method: 'GET',
      path: '/api/instance/{userId}/token',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Read the gateway token the instance uses; one is generated (and stored encrypted) when none exists.',
      description:
        "Returns exactly the token the running instance checks. The path `userId` must be the caller's own id (403 otherwise); 502 when the backend is unreachable.",
      params: UserIdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ token: z.string().check(z.minLength(1)) }),
        404: ErrorBody(),
        502: ErrorBody(),
      }),
    },
    {
      operation: 'rotateInstanceToken',
      method: 'POST',
      path: '/api/instance/{userId}/token/rotate',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Replace the instance gateway token with a new one, now.',
      description:
        'For an owner who suspects the token leaked: the old token stops working on the platform at once; a running instance is handed the new one over its old one and swaps it ' +
        'in place (agents, memory and history stay; open connections made with the old token are closed); a stopped instance starts with the new one. ' +
        'Password resets rotate it too, as do password changes and sign-out everywhere. Answers the new token (as `GET .../token` would). ' +
        "The path `userId` must be the caller's own id (403 otherwise). `rotated: false` when no token existed yet (one is generated and returned).",
      params: UserIdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ success: z.literal(true), rotated: z.boolean(), token: z.string().check(z.minLength(1)) }),
        404: ErrorBody(),
      }),
    },
    {
      operation: 'getRuntimeState',
      method: 'GET',
      path: '/api/instance/{userId}/runtime/state',
      auth: 'runtime',
      summary: 'Runtime: the agents an instance serves, with configuration, memory and recent history (loaded at start, so a restart loses nothing).',
      description: `${runtimeAuth} \`agentId\` narrows the answer to one agent (an empty list when it is not the account's). History: the newest ${RUNTIME_HISTORY_MESSAGES} messages per agent.`,
      params: UserIdParams,
      query: () => z.strictObject({ agentId: z.optional(ResourceId()) }),
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ userId: z.string(), runtimeVersion: z.string(), agents: z.array(RuntimeAgentState()) }),
      }),
    },
    {
      operation: 'reportRuntimeExchange',
      method: 'POST',
      path: '/api/instance/{userId}/runtime/messages',
      auth: 'runtime',
      summary: "Runtime: store the messages of one chat exchange and the agent's figures (message history and the stats fallback read them).",
      description: `${runtimeAuth} 404 when the agent is not the account's.`,
      params: UserIdParams,
      body: RuntimeExchangeBody,
      example: {
        agentId: 'agt_7f3k2m9q',
        messages: [
          { role: 'user', content: 'Can you hold the 14th for the Bristol show?' },
          { role: 'assistant', content: 'I have pencilled in the 14th; I will confirm once the promoter signs.' },
        ],
        responseMs: 840,
      },
      responses: () => ({ ...commonErrorResponses(), 200: SuccessTrue(), 404: ErrorBody() }),
    },
    {
      operation: 'runtimeA2aMessage',
      method: 'POST',
      path: '/api/instance/{userId}/runtime/a2a',
      auth: 'runtime',
      summary: "Runtime: one of the account's agents sends a message to another of its agents (agent-to-agent, spec 2.16).",
      description: [
        runtimeAuth,
        "Both agents must be the account's (404 otherwise); an active subscription is required unless the owner is an admin (402).",
        "Each message counts against the plan's A2A limit per UTC day (label 100, solo 500, collective 2,000, network 10,000), counted in the",
        'database so concurrent sends never pass it: beyond it 429 `A2A_LIMIT_REACHED` with `current` and `limit`. The message is stored in the',
        "recipient's history (role `user`, prefixed with the sender), where its runtime reads it.",
      ].join(' '),
      params: UserIdParams,
      body: () => z.strictObject({ fromAgentId: ResourceId(), toAgentId: ResourceId(), message: z.string().check(z.minLength(1), z.maxLength(32_000)) }),
      example: { fromAgentId: 'agt_7f3k2m9q', toAgentId: 'agt_2b8x4n1c', message: 'The Berlin venue confirmed 300 capacity.' },
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({
          success: z.literal(true),
          message: z.object({ id: z.string(), fromAgentId: z.string(), toAgentId: z.string(), createdAt: IsoDate() }),
          usage: z.object({ today: z.number().check(z.int()), limit: z.number().check(z.int()) }),
        }),
        402: ErrorBody(),
        404: ErrorBody(),
        429: z.extend(ErrorBody(), { current: z.number().check(z.int()), limit: z.number().check(z.int()) }),
      }),
    },
  ],
});
