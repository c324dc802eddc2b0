import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId, SuccessTrue, ValidationErrorBody } from './common';
import { defineGroup, lazySchema, type RouteDefinition } from './route';
import { MemoryKey } from './memory';
import { LOOP_BREAKER_DEFAULTS } from './loop-breaker';

/**
 * Autonomous agents: monthly spending caps with a kill switch, scheduled prompts, and
 * agent export/import. Served by the agent-autonomy group.
 */

const AgentIdParams = lazySchema(() => z.strictObject({ id: ResourceId() }));

// --- budgets ---

export const BUDGET_CAP_MAX_USD = 1_000_000;

export const BudgetView = lazySchema(() =>
  z.object({
    scope: z.enum(['account', 'agent']),
    agentId: z.optional(z.string()),
    monthlyCapUsd: z.nullable(z.number()).check(z.describe('null: no cap')),
    month: z.string().check(z.describe('the UTC month the spend is counted in, `YYYY-MM`')),
    spentUsd: z.number().check(z.describe('catalogue cost of the metered calls of the month, calls in flight included')),
    status: z.enum(['ok', 'warning', 'exceeded']).check(z.describe('`warning` from 80 % of the cap, `exceeded` at the cap')),
    paused: z.boolean().check(z.describe('what the cap covers is paused by the budget (the instance stopped, or the agent paused)')),
  }),
);

export const PutBudgetBody = lazySchema(() =>
  z.strictObject({
    monthlyCapUsd: z
      .nullable(z.number().check(z.positive(), z.maximum(BUDGET_CAP_MAX_USD)))
      .check(z.describe('the cap in USD at catalogue price; null removes it')),
  }),
);

const budgetDescription = [
  'A monthly (UTC calendar month) spending cap over everything metered: model calls (AI routes, agent chat, the gateway charged to the account),',
  'image generation and metered skills, at catalogue price. At 80 % a `budget.warning` event (and webhook) and an email; at 100 % a `budget.exceeded`',
  'event and email, further metered calls answer 402 `BUDGET_EXCEEDED`, scheduled runs are skipped and recorded, and what the cap covers is paused:',
  'the account cap stops the instance with reason `budget`, an agent cap pauses the agent. Raising (or removing) the cap resumes it; a stop the user',
  'asked for is never undone. Each alert goes once per month per cap value. The admission check is one conditional write with the spend,',
  "so any number of concurrent calls overshoot the cap by less than one call's reservation (its prompt plus its output ceiling, at catalogue price).",
].join(' ');

export const budgetRoutes = [
  {
    operation: 'getAccountBudget',
    method: 'GET',
    path: '/api/budget',
    auth: 'session',
    rateLimit: 'agents',
    summary: "The account's monthly spending cap and this month's spend.",
    description: budgetDescription,
    responses: () => ({ ...commonErrorResponses(), 200: z.object({ budget: BudgetView() }) }),
  },
  {
    operation: 'putAccountBudget',
    method: 'PUT',
    path: '/api/budget',
    auth: 'session',
    rateLimit: 'agents',
    summary: "Set or remove the account's monthly spending cap.",
    description: budgetDescription,
    body: PutBudgetBody,
    example: { monthlyCapUsd: 25 },
    responses: () => ({ ...commonErrorResponses(), 200: z.object({ budget: BudgetView(), resumed: z.boolean() }), 400: ValidationErrorBody() }),
  },
  {
    operation: 'getAgentBudget',
    method: 'GET',
    path: '/api/agents/{id}/budget',
    auth: 'session',
    rateLimit: 'agents',
    summary: "An owned agent's monthly spending cap and this month's spend.",
    params: AgentIdParams,
    responses: () => ({ ...commonErrorResponses(), 200: z.object({ budget: BudgetView() }), 404: ErrorBody() }),
  },
  {
    operation: 'putAgentBudget',
    method: 'PUT',
    path: '/api/agents/{id}/budget',
    auth: 'session',
    rateLimit: 'agents',
    summary: "Set or remove an owned agent's monthly spending cap.",
    description: budgetDescription,
    params: AgentIdParams,
    body: PutBudgetBody,
    example: { monthlyCapUsd: 5 },
    responses: () => ({
      ...commonErrorResponses(),
      200: z.object({ budget: BudgetView(), resumed: z.boolean() }),
      400: ValidationErrorBody(),
      404: ErrorBody(),
    }),
  },
] as const satisfies readonly RouteDefinition[];

// --- the loop breaker ---

export { LOOP_BREAKER_DEFAULTS };

export const LoopBreakerSettings = lazySchema(() =>
  z.strictObject({
    repeatLimit: z
      .number()
      .check(z.int(), z.minimum(3), z.maximum(1000), z.describe('identical calls within the window that pause the agent (the last of them is refused)')),
    windowSeconds: z.number().check(z.int(), z.minimum(60), z.maximum(86_400), z.describe('the window of the repeat limit, opened by the first call')),
    spendShare: z
      .number()
      .check(
        z.minimum(0.01),
        z.maximum(1),
        z.describe("share of the monthly cap (the agent's, else the account's) spent within the spend window that pauses the agent"),
      ),
    spendWindowMinutes: z.number().check(z.int(), z.minimum(1), z.maximum(1440)),
  }),
);

export const LoopTripView = lazySchema(() =>
  z.object({
    kind: z.enum(['repeated-call', 'spend-velocity']),
    signature: z.optional(z.string()).check(z.describe('hash of the normalised arguments of the repeated call')),
    call: z.optional(z.string()).check(z.describe('`model` (a model request continuing after the same tool calls and results) or `skill:<name>`')),
    count: z.optional(z.number()),
    windowSeconds: z.number(),
    spentUsd: z.number().check(z.describe("the agent's spend in the spend window")),
    monthlyCapUsd: z.optional(z.number()),
    at: IsoDate(),
  }),
);

export const LoopBreakerView = lazySchema(() =>
  z.object({
    agentId: z.string(),
    settings: LoopBreakerSettings(),
    paused: z.boolean().check(z.describe('the loop breaker paused the agent: its metered calls answer 402 `AGENT_LOOP_PAUSED`, its schedules are skipped')),
    trip: z.nullable(LoopTripView()).check(z.describe('the evidence of the trip while paused')),
  }),
);

const loopBreakerDescription = [
  'The runaway-loop breaker watches what an agent calls: each skill call (skill, action and normalised arguments) and each model request that',
  'continues after tool results (the model, the last assistant tool calls and their results, ids left out) is hashed into a signature.',
  "`repeatLimit` identical calls within `windowSeconds`, or more than `spendShare` of the monthly cap (the agent's, else the account's; no cap:",
  'no spend check) within `spendWindowMinutes`, pause the agent once: an `agent.loop_detected` event and webhook with the evidence, an email to',
  'the owner, metered calls of the agent answer 402 `AGENT_LOOP_PAUSED` and its scheduled runs are skipped (`loop-paused`) until the owner resumes it.',
].join(' ');

export const loopBreakerRoutes = [
  {
    operation: 'getAgentLoopBreaker',
    method: 'GET',
    path: '/api/agents/{id}/loop-breaker',
    auth: 'session',
    rateLimit: 'agents',
    summary: "An owned agent's loop-breaker thresholds and whether it paused the agent.",
    description: loopBreakerDescription,
    params: AgentIdParams,
    responses: () => ({ ...commonErrorResponses(), 200: z.object({ loopBreaker: LoopBreakerView() }), 404: ErrorBody() }),
  },
  {
    operation: 'putAgentLoopBreaker',
    method: 'PUT',
    path: '/api/agents/{id}/loop-breaker',
    auth: 'session',
    rateLimit: 'agents',
    summary: "Set an owned agent's loop-breaker thresholds (all four; the defaults are in the description).",
    description: `${loopBreakerDescription} Defaults: repeatLimit ${LOOP_BREAKER_DEFAULTS.repeatLimit}, windowSeconds ${LOOP_BREAKER_DEFAULTS.windowSeconds}, spendShare ${LOOP_BREAKER_DEFAULTS.spendShare}, spendWindowMinutes ${LOOP_BREAKER_DEFAULTS.spendWindowMinutes}.`,
    params: AgentIdParams,
    body: LoopBreakerSettings,
    example: { ...LOOP_BREAKER_DEFAULTS },
    responses: () => ({ ...commonErrorResponses(), 200: z.object({ loopBreaker: LoopBreakerView() }), 400: ValidationErrorBody(), 404: ErrorBody() }),
  },
  {
    operation: 'resumeAgentLoopBreaker',
    method: 'POST',
    path: '/api/agents/{id}/loop-breaker/resume',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'Resume an agent the loop breaker paused; its windows start afresh.',
    description: `${loopBreakerDescription} \`resumed: false\` when the loop breaker had not paused the agent.`,
    params: AgentIdParams,
    responses: () => ({ ...commonErrorResponses(), 200: z.object({ loopBreaker: LoopBreakerView(), resumed: z.boolean() }), 404: ErrorBody() }),
  },
] as const satisfies readonly RouteDefinition[];

// --- scheduled prompts ---

export const SCHEDULE_PROMPT_MAX_CHARS = 4000;

const ScheduleParams = lazySchema(() => z.strictObject({ id: ResourceId(), scheduleId: ResourceId() }));

export const RunSummary = lazySchema(() =>
  z.object({
    runId: z.string().check(z.describe('the schedule id and the slot it served: `<scheduleId>#<slot>`')),
    slot: IsoDate().check(z.describe('the due time the run served')),
    status: z.enum(['running', 'succeeded', 'skipped', 'failed']),
    reason: z
      .optional(z.string())
      .check(
        z.describe(
          'skipped: `instance-not-running`, `budget`, `loop-paused`, `daily-run-limit`, `subscription-required`, `agent-missing`; failed: the error code',
        ),
      ),
    at: IsoDate(),
  }),
);

export const ScheduleView = lazySchema(() =>
  z.object({
    id: z.string(),
    agentId: z.string(),
    cron: z.optional(z.string()).check(z.describe('five-field cron expression, UTC')),
    at: z.optional(IsoDate()).check(z.describe('one-time run')),
    prompt: z.string(),
    sessionId: z.optional(z.string()),
    status: z.enum(['active', 'paused', 'done']),
    nextRunAt: z.nullable(IsoDate()),
    createdAt: IsoDate(),
    updatedAt: IsoDate(),
    lastRun: z.optional(RunSummary()),
  }),
);

export const CreateScheduleBody = lazySchema(() =>
  z.strictObject({
    cron: z
      .optional(z.string().check(z.minLength(9), z.maxLength(100)))
      .check(
        z.describe(
          '`minute hour day-of-month month day-of-week` in UTC (`*`, numbers, ranges, steps, lists, names such as `MON`, `L` and `#`); give `cron` or `at`',
        ),
      ),
    at: z.optional(IsoDate()).check(z.describe('a one-time run at this time; give `cron` or `at`')),
    prompt: z.string().check(z.minLength(1), z.maxLength(SCHEDULE_PROMPT_MAX_CHARS)),
    sessionId: z.optional(ResourceId()).check(z.describe('a chat session of this agent (`/api/agent`): the run continues it and its answer is added to it')),
  }),
);

export const UpdateScheduleBody = lazySchema(() => z.strictObject({ paused: z.boolean() }));

const scheduleDescription = [
  "Scheduled prompts: at each due time the sweeper sends the prompt to the agent on the account's running instance; the answer is stored in",
  "the agent's history (and in the session, when the schedule names one) and a `schedule.run` event is recorded. A run that cannot happen is",
  "recorded as skipped with its reason (`schedule.skipped`): the instance is not running, a spending cap is reached, the plan's runs per day",
  'are used up. Each slot runs at least once and at most once to completion (the run id is the schedule id plus the slot, taken by a',
  'conditional write). Runs missed while the platform was down run once, not once per missed slot: the next slot is counted from the time of',
  'the run. Punctuality is the sweeper tick (`HEARTBEAT_TICK_MS` locally, a 1-minute rule in AWS). Per plan: schedules per account',
  '(label 5, solo 20, collective 50, network 200; 429 `SCHEDULE_LIMIT_REACHED`) and runs per account per UTC day (100, 1500, 5000, 20000).',
].join(' ');

export const scheduleRoutes = [
  {
    operation: 'listAgentSchedules',
    method: 'GET',
    path: '/api/agents/{id}/schedules',
    auth: 'session',
    rateLimit: 'agents',
    summary: "An owned agent's scheduled prompts.",
    description: scheduleDescription,
    params: AgentIdParams,
    responses: () => ({ ...commonErrorResponses(), 200: z.object({ schedules: z.array(ScheduleView()) }), 404: ErrorBody() }),
  },
  {
    operation: 'createAgentSchedule',
    method: 'POST',
    path: '/api/agents/{id}/schedules',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'Schedule a prompt for an owned agent (a UTC cron expression or a one-time `at`).',
    description: `${scheduleDescription} 400 \`INVALID_SCHEDULE\` for a bad or never-running cron expression, an \`at\` in the past, or both or neither of \`cron\` and \`at\`; 404 for a session that is not this agent's.`,
    params: AgentIdParams,
    body: CreateScheduleBody,
    example: { cron: '0 9 * * 1-5', prompt: "Summarise yesterday's bookings." },
    responses: () => ({
      ...commonErrorResponses(),
      201: z.object({ schedule: ScheduleView() }),
      400: z.union([ValidationErrorBody(), ErrorBody()]),
      402: ErrorBody(),
      404: ErrorBody(),
      429: ErrorBody(),
    }),
  },
  {
    operation: 'getAgentSchedule',
    method: 'GET',
    path: '/api/agents/{id}/schedules/{scheduleId}',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'One schedule and its runs (kept 30 days), oldest first.',
    params: ScheduleParams,
    responses: () => ({ ...commonErrorResponses(), 200: z.object({ schedule: ScheduleView(), runs: z.array(RunSummary()) }), 404: ErrorBody() }),
  },
  {
    operation: 'updateAgentSchedule',
    method: 'PATCH',
    path: '/api/agents/{id}/schedules/{scheduleId}',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'Pause or resume a schedule; a resumed cron schedule runs at its next slot from now, a one-time one at its time (or at once when that passed).',
    params: ScheduleParams,
    body: UpdateScheduleBody,
    example: { paused: true },
    responses: () => ({
      ...commonErrorResponses(),
      200: z.object({ schedule: ScheduleView() }),
      400: ValidationErrorBody(),
      404: ErrorBody(),
      409: ErrorBody(),
    }),
  },
  {
    operation: 'deleteAgentSchedule',
    method: 'DELETE',
    path: '/api/agents/{id}/schedules/{scheduleId}',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'Delete a schedule; its past runs stay readable until they expire.',
    params: ScheduleParams,
    responses: () => ({ ...commonErrorResponses(), 200: SuccessTrue(), 404: ErrorBody() }),
  },
] as const satisfies readonly RouteDefinition[];

// --- export and import ---

export const AGENT_EXPORT_FORMAT = 'agent-platform/agent';
export const AGENT_EXPORT_VERSION = 1;
export const AGENT_EXPORT_MAX_SCHEDULES = 200;
export const AGENT_EXPORT_MAX_HISTORY = 1000;

/** Any JSON value of a memory entry or a skill setting. */
const JsonValue = lazySchema(() => z.json());

export const AgentExport = lazySchema(() =>
  z.strictObject({
    format: z.literal(AGENT_EXPORT_FORMAT),
    formatVersion: z
      .number()
      .check(z.int(), z.positive(), z.describe(`${AGENT_EXPORT_VERSION} today; an import of a newer version answers 400 \`EXPORT_VERSION_UNSUPPORTED\``)),
    exportedAt: IsoDate(),
    agent: z.strictObject({
      name: z.string().check(z.minLength(1), z.maxLength(100)),
      model: z.string().check(z.minLength(1), z.maxLength(128)),
      config: z
        .record(z.string(), JsonValue())
        .check(z.describe('the agent configuration without secret values (`env` keeps names only, under `secrets.env`)')),
    }),
    memory: z
      .record(MemoryKey(), JsonValue())
      .check(z.describe('the memory keys follow the memory API (`/api/memory`): 1 to 256 characters, no unpaired surrogates, not `__proto__`')),
    skills: z.array(z.strictObject({ skillId: ResourceId(), enabled: z.boolean(), config: z.record(z.string(), JsonValue()) })).check(z.maxLength(100)),
    schedules: z
      .array(
        z.strictObject({
          cron: z.optional(z.string().check(z.maxLength(100))),
          at: z.optional(IsoDate()),
          prompt: z.string().check(z.minLength(1), z.maxLength(SCHEDULE_PROMPT_MAX_CHARS)),
          status: z.enum(['active', 'paused', 'done']),
        }),
      )
      .check(z.maxLength(AGENT_EXPORT_MAX_SCHEDULES)),
    secrets: z
      .strictObject({
        env: z.array(z.string().check(z.maxLength(128))).check(z.maxLength(100)),
        credentials: z.array(z.string().check(z.maxLength(128))).check(z.maxLength(100)),
        skillSettings: z
          .array(z.strictObject({ skillId: z.string().check(z.maxLength(64)), field: z.string().check(z.maxLength(128)) }))
          .check(z.maxLength(500)),
      })
      .check(z.describe('the NAMES of the secrets the agent used, never their values: enter them again after an import')),
    history: z
      .optional(
        z
          .array(z.strictObject({ role: z.enum(['user', 'assistant', 'system']), content: z.string(), createdAt: IsoDate() }))
          .check(z.maxLength(AGENT_EXPORT_MAX_HISTORY)),
      )
      .check(z.describe('with `?history=true`: the newest messages, oldest first (for the record; an import starts a fresh history)')),
  }),
);

const exportDescription = [
  `A versioned JSON document (\`format\` \`${AGENT_EXPORT_FORMAT}\`, \`formatVersion\` ${AGENT_EXPORT_VERSION}): name, model, configuration, memory,`,
  'installed skills and their settings, schedules, and with `?history=true` the newest messages. Never a secret value: environment',
  'variables, agent credentials and skill settings that name a secret (key, token, secret, password, credential) are listed by name under',
  '`secrets` and must be entered again after an import. Session links of schedules are not carried over.',
].join(' ');

export const portabilityRoutes = [
  {
    operation: 'exportAgent',
    method: 'GET',
    path: '/api/agents/{id}/export',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'Export an owned agent as a versioned JSON document.',
    description: exportDescription,
    params: AgentIdParams,
    query: () => z.strictObject({ history: z._default(z.enum(['true', 'false']), 'false').check(z.describe('include the newest messages')) }),
    responses: () => ({ ...commonErrorResponses(), 200: AgentExport(), 404: ErrorBody() }),
  },
  {
    operation: 'importAgent',
    method: 'POST',
    path: '/api/agents/import',
    auth: 'session',
    rateLimit: 'provision',
    summary: "Create a new agent in the caller's account from an export document.",
    description: [
      exportDescription,
      'The import is checked before anything is written: the schema (400 `INVALID_EXPORT` with the issues), the body size (413 over',
      '`MAX_BODY_BYTES`), the version (400 `EXPORT_VERSION_UNSUPPORTED` for a newer one), that every skill exists (400 `UNKNOWN_SKILL`),',
      "and the plan's skill and schedule limits (429 `SKILL_LIMIT_REACHED`, `SCHEDULE_LIMIT_REACHED`). The agent is then created through",
      "provisioning (the plan's agent limit in the same transaction: 429 `AGENT_LIMIT_REACHED`; 402 without an active subscription) and its",
      'memory, skills and schedules are written to it.',
    ].join(' '),
    body: AgentExport,
    bodyHandling: { validatedBy: 'handler' },
    example: {
      format: AGENT_EXPORT_FORMAT,
      formatVersion: AGENT_EXPORT_VERSION,
      exportedAt: '2026-11-24T10:00:00.000Z',
      agent: { name: 'Tour Booking Assistant', model: 'openai/gpt-4o-mini', config: { systemPrompt: 'You book tours.' } },
      memory: { venue: 'Paradiso' },
      skills: [{ skillId: 'calendar', enabled: true, config: {} }],
      schedules: [{ cron: '0 9 * * 1-5', prompt: "Summarise yesterday's bookings.", status: 'active' }],
      secrets: { env: [], credentials: [], skillSettings: [] },
    },
    responses: () => ({
      ...commonErrorResponses(),
      201: z.object({
        success: z.literal(true),
        agent: z.object({ id: z.string(), name: z.string(), model: z.string(), status: z.literal('provisioning'), createdAt: IsoDate() }),
        imported: z.object({ memoryKeys: z.number().check(z.int()), skills: z.number().check(z.int()), schedules: z.number().check(z.int()) }),
        secretsToEnter: z.object({
          env: z.array(z.string()),
          credentials: z.array(z.string()),
          skillSettings: z.array(z.object({ skillId: z.string(), field: z.string() })),
        }),
      }),
      400: z.union([ValidationErrorBody(), ErrorBody()]),
      402: ErrorBody(),
      429: ErrorBody(),
      502: ErrorBody(),
    }),
  },
] as const satisfies readonly RouteDefinition[];

// --- checkpoints, rewind and clone ---

/** Days an automatic checkpoint is kept. */
export const AUTO_CHECKPOINT_KEEP_DAYS = 7;
/** Automatic checkpoints kept per agent: a new one beyond this removes the oldest. */
export const AUTO_CHECKPOINTS_PER_AGENT = 10;
export const CHECKPOINT_NAME_MAX_CHARS = 100;
export const CHECKPOINT_REASONS = ['reset-memory', 'update', 'memory-write', 'rewind'] as const;

const CheckpointParams = lazySchema(() => z.strictObject({ id: ResourceId(), checkpointId: ResourceId() }));
const Count = () => z.number().check(z.int(), z.nonnegative());

export const CheckpointView = lazySchema(() =>
  z.object({
    id: z.string(),
    agentId: z.string(),
    kind: z.enum(['named', 'auto']).check(z.describe('`named`: made by the owner, kept until deleted; `auto`: taken by the platform before a change')),
    name: z.string(),
    reason: z.optional(z.enum(CHECKPOINT_REASONS)).check(z.describe('auto: the change it was taken before')),
    createdAt: IsoDate(),
    expiresAt: z.optional(IsoDate()).check(z.describe(`auto: when it goes (${AUTO_CHECKPOINT_KEEP_DAYS} days after it was taken)`)),
    sizeBytes: Count().check(z.describe('size of the stored snapshot')),
    contents: z.object({ memoryKeys: Count(), skills: Count(), schedules: Count(), messages: Count() }),
  }),
);

export const CheckpointLimitsView = lazySchema(() =>
  z.object({
    named: z.object({ current: Count(), limit: Count() }).check(z.describe("named checkpoints of this agent and the plan's limit")),
    maxBytes: Count().check(z.describe("the plan's largest snapshot")),
    autoKeptDays: Count(),
    autoPerAgent: Count(),
  }),
);

const checkpointDescription = [
  'A checkpoint is a snapshot of an agent: configuration, memory, installed skills with their settings, schedules and the newest messages,',
  'never a secret value (the same snapshot as the export: `env` values, credentials and secret skill settings are kept by name only).',
  "Named checkpoints are counted per agent against the plan (429 `CHECKPOINT_LIMIT_REACHED` with `current` and `limit`); a snapshot over the plan's",
  'size answers 429 `CHECKPOINT_TOO_LARGE` with `current` and `limit` in bytes. The platform takes an automatic checkpoint of an agent before',
  '`reset-memory`, an instance `update`, a bulk memory write and a rewind; they do not count against the limit, are kept',
  `${AUTO_CHECKPOINT_KEEP_DAYS} days, at most ${AUTO_CHECKPOINTS_PER_AGENT} per agent (the oldest goes first).`,
].join(' ');

export const checkpointRoutes = [
  {
    operation: 'listAgentCheckpoints',
    method: 'GET',
    path: '/api/agents/{id}/checkpoints',
    auth: 'session',
    rateLimit: 'agents',
    summary: "An owned agent's checkpoints, newest first, named and automatic, with the plan's limits.",
    description: checkpointDescription,
    params: AgentIdParams,
    responses: () => ({
      ...commonErrorResponses(),
      200: z.object({ checkpoints: z.array(CheckpointView()), limits: CheckpointLimitsView() }),
      404: ErrorBody(),
    }),
  },
  {
    operation: 'createAgentCheckpoint',
    method: 'POST',
    path: '/api/agents/{id}/checkpoints',
    auth: 'session',
    rateLimit: 'agents',
    // A client that timed out retries with the same key and gets the checkpoint it made, not a second one.
    policy: { idempotent: true },
    summary: 'Take a named checkpoint of an owned agent.',
    description: checkpointDescription,
    params: AgentIdParams,
    body: () => z.strictObject({ name: z.string().check(z.trim(), z.minLength(1), z.maxLength(CHECKPOINT_NAME_MAX_CHARS)) }),
    example: { name: 'Before the tour rewrite' },
    responses: () => ({
      ...commonErrorResponses(),
      201: z.object({ checkpoint: CheckpointView() }),
      400: ValidationErrorBody(),
      402: ErrorBody(),
      404: ErrorBody(),
      429: ErrorBody(),
    }),
  },
  {
    operation: 'getAgentCheckpoint',
    method: 'GET',
    path: '/api/agents/{id}/checkpoints/{checkpointId}',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'One checkpoint and what it holds: the configuration, the memory key names, skills, schedules and the names of the secrets left out.',
    params: CheckpointParams,
    responses: () => ({
      ...commonErrorResponses(),
      200: z.object({
        checkpoint: CheckpointView(),
        snapshot: z.object({
          agent: z.object({ name: z.string(), model: z.string(), config: z.record(z.string(), z.json()) }),
          memoryKeys: z.array(z.string()),
          skills: z.array(z.object({ skillId: z.string(), enabled: z.boolean() })),
          schedules: z.array(
            z.object({ cron: z.optional(z.string()), at: z.optional(IsoDate()), prompt: z.string(), status: z.enum(['active', 'paused', 'done']) }),
          ),
          secrets: z.object({
            env: z.array(z.string()),
            credentials: z.array(z.string()),
            skillSettings: z.array(z.object({ skillId: z.string(), field: z.string() })),
          }),
        }),
      }),
      404: ErrorBody(),
    }),
  },
  {
    operation: 'deleteAgentCheckpoint',
    method: 'DELETE',
    path: '/api/agents/{id}/checkpoints/{checkpointId}',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'Delete a checkpoint (named or automatic) and its snapshot.',
    params: CheckpointParams,
    responses: () => ({ ...commonErrorResponses(), 200: SuccessTrue(), 404: ErrorBody() }),
  },
  {
    operation: 'rewindAgentCheckpoint',
    method: 'POST',
    path: '/api/agents/{id}/checkpoints/{checkpointId}/rewind',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'Restore an owned agent in place to a checkpoint; the running instance reloads it.',
    description: [
      "Memory becomes exactly the checkpoint's (keys written since are removed), the configuration exactly the checkpoint's with the agent's",
      'current `env` values kept for the names it lists (secret values are never in a checkpoint), the settings and on/off state of the skills',
      "still installed are the checkpoint's (secret settings kept), and the conversation replayed into prompts is the one replayed at the",
      'checkpoint (messages written since stay readable). Skills installed or removed since, schedules and credentials are left as they are.',
      'An automatic checkpoint of the state before the rewind is taken first, so a rewind can itself be undone. A running instance reloads',
      'the agent at once (`instanceTold`); a stopped one loads it at its next start.',
    ].join(' '),
    params: CheckpointParams,
    responses: () => ({
      ...commonErrorResponses(),
      200: z.object({
        success: z.literal(true),
        checkpoint: CheckpointView(),
        restored: z.object({ memoryKeys: Count(), memoryKeysRemoved: Count(), skills: Count() }),
        undoCheckpointId: z.optional(z.string()).check(z.describe('the automatic checkpoint of the state before the rewind')),
        instanceTold: z.boolean(),
      }),
      404: ErrorBody(),
    }),
  },
  {
    operation: 'cloneAgentCheckpoint',
    method: 'POST',
    path: '/api/agents/{id}/checkpoints/{checkpointId}/clone',
    auth: 'session',
    rateLimit: 'provision',
    policy: { idempotent: true },
    summary: "Create a new agent in the caller's account from a checkpoint: same configuration, memory, skills and schedules.",
    description: [
      "The new agent is provisioned within the plan's limits as an import is (429 `AGENT_LIMIT_REACHED`, `SKILL_LIMIT_REACHED`,",
      '`SCHEDULE_LIMIT_REACHED`; 402 without an active subscription); secrets are listed by name under `secretsToEnter`; its history starts fresh.',
    ].join(' '),
    params: CheckpointParams,
    body: () => z.strictObject({ name: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(100))) }),
    example: { name: 'Tour Booker (copy)' },
    responses: () => ({
      ...commonErrorResponses(),
      201: z.object({
        success: z.literal(true),
        agent: z.object({ id: z.string(), name: z.string(), model: z.string(), status: z.literal('provisioning'), createdAt: IsoDate() }),
        imported: z.object({ memoryKeys: Count(), skills: Count(), schedules: Count() }),
        secretsToEnter: z.object({
          env: z.array(z.string()),
          credentials: z.array(z.string()),
          skillSettings: z.array(z.object({ skillId: z.string(), field: z.string() })),
        }),
      }),
      400: ValidationErrorBody(),
      402: ErrorBody(),
      404: ErrorBody(),
      429: ErrorBody(),
      502: ErrorBody(),
    }),
  },
] as const satisfies readonly RouteDefinition[];

export const agentAutonomyContract = defineGroup({
  group: 'agent-autonomy',
  description: [
    'Spending caps, the loop breaker, scheduled prompts, export/import and checkpoints of agents, rate limited by the `agents` scope like the agents group.',
    'Apart from the agents group because schedules bundle the cron parser and export/import the skill catalogue.',
  ].join(' '),
  dynamoOnly: false,
  routes: [...budgetRoutes, ...loopBreakerRoutes, ...scheduleRoutes, ...portabilityRoutes, ...checkpointRoutes],
});
