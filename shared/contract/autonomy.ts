import * as z from 'zod';
import { ResourceId } from './memory';
import { commonErrorResponses, ErrorBody, IsoDate, type RouteDefinition, SuccessTrue, ValidationErrorBody } from './route';

/**
 * Autonomous agents (issue 22): monthly spending caps with a kill switch, scheduled prompts, and
 * agent export/import. Served by the agents group.
 */

const AgentIdParams = z.strictObject({ id: ResourceId });

// --- budgets ---

export const BUDGET_CAP_MAX_USD = 1_000_000;

export const BudgetView = z.object({
  scope: z.enum(['account', 'agent']),
  agentId: z.string().optional(),
  monthlyCapUsd: z.number().nullable().describe('null: no cap'),
  month: z.string().describe('the UTC month the spend is counted in, `YYYY-MM`'),
  spentUsd: z.number().describe('catalogue cost of the metered calls of the month, calls in flight included'),
  status: z.enum(['ok', 'warning', 'exceeded']).describe('`warning` from 80 % of the cap, `exceeded` at the cap'),
  paused: z.boolean().describe('what the cap covers is paused by the budget (the instance stopped, or the agent paused)'),
});

export const PutBudgetBody = z.strictObject({
  monthlyCapUsd: z.number().positive().max(BUDGET_CAP_MAX_USD).nullable().describe('the cap in USD at catalogue price; null removes it'),
});

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
    responses: { ...commonErrorResponses, 200: z.object({ budget: BudgetView }) },
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
    responses: { ...commonErrorResponses, 200: z.object({ budget: BudgetView, resumed: z.boolean() }), 400: ValidationErrorBody },
  },
  {
    operation: 'getAgentBudget',
    method: 'GET',
    path: '/api/agents/{id}/budget',
    auth: 'session',
    rateLimit: 'agents',
    summary: "An owned agent's monthly spending cap and this month's spend.",
    params: AgentIdParams,
    responses: { ...commonErrorResponses, 200: z.object({ budget: BudgetView }), 404: ErrorBody },
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
    responses: { ...commonErrorResponses, 200: z.object({ budget: BudgetView, resumed: z.boolean() }), 400: ValidationErrorBody, 404: ErrorBody },
  },
] as const satisfies readonly RouteDefinition[];

// --- scheduled prompts ---

export const SCHEDULE_PROMPT_MAX_CHARS = 4000;

const ScheduleParams = z.strictObject({ id: ResourceId, scheduleId: ResourceId });

export const RunSummary = z.object({
  runId: z.string().describe('the schedule id and the slot it served: `<scheduleId>#<slot>`'),
  slot: IsoDate.describe('the due time the run served'),
  status: z.enum(['running', 'succeeded', 'skipped', 'failed']),
  reason: z
    .string()
    .optional()
    .describe('skipped: `instance-not-running`, `budget`, `daily-run-limit`, `subscription-required`, `agent-missing`; failed: the error code'),
  at: IsoDate,
});

export const ScheduleView = z.object({
  id: z.string(),
  agentId: z.string(),
  cron: z.string().optional().describe('five-field cron expression, UTC'),
  at: IsoDate.optional().describe('one-time run'),
  prompt: z.string(),
  sessionId: z.string().optional(),
  status: z.enum(['active', 'paused', 'done']),
  nextRunAt: IsoDate.nullable(),
  createdAt: IsoDate,
  updatedAt: IsoDate,
  lastRun: RunSummary.optional(),
});

export const CreateScheduleBody = z.strictObject({
  cron: z
    .string()
    .min(9)
    .max(100)
    .optional()
    .describe('`minute hour day-of-month month day-of-week` in UTC (`*`, numbers, ranges, steps, lists); give `cron` or `at`'),
  at: IsoDate.optional().describe('a one-time run at this time; give `cron` or `at`'),
  prompt: z.string().min(1).max(SCHEDULE_PROMPT_MAX_CHARS),
  sessionId: ResourceId.optional().describe('a chat session of this agent (`/api/agent`): the run continues it and its answer is added to it'),
});

export const UpdateScheduleBody = z.strictObject({ paused: z.boolean() });

const scheduleDescription = [
  "Scheduled prompts: at each due time the sweeper sends the prompt to the agent on the account's running instance; the answer is stored in",
  "the agent's history (and in the session, when the schedule names one) and a `schedule.run` event is recorded. A run that cannot happen is",
  "recorded as skipped with its reason (`schedule.skipped`): the instance is not running, a spending cap is reached, the plan's runs per day",
  'are used up. Each slot runs at least once and at most once to completion (the run id is the schedule id plus the slot, taken by a',
  'conditional write). Runs missed while the platform was down run once, not once per missed slot: the next slot is counted from the time of',
  'the run. Punctuality is the sweeper tick (`HEARTBEAT_TICK_MS` locally, the heartbeat schedule in AWS). Per plan: schedules per account',
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
    responses: { ...commonErrorResponses, 200: z.object({ schedules: z.array(ScheduleView) }), 404: ErrorBody },
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
    responses: {
      ...commonErrorResponses,
      201: z.object({ schedule: ScheduleView }),
      400: z.union([ValidationErrorBody, ErrorBody]),
      402: ErrorBody,
      404: ErrorBody,
      429: ErrorBody,
    },
  },
  {
    operation: 'getAgentSchedule',
    method: 'GET',
    path: '/api/agents/{id}/schedules/{scheduleId}',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'One schedule and its runs (kept 30 days), oldest first.',
    params: ScheduleParams,
    responses: { ...commonErrorResponses, 200: z.object({ schedule: ScheduleView, runs: z.array(RunSummary) }), 404: ErrorBody },
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
    responses: { ...commonErrorResponses, 200: z.object({ schedule: ScheduleView }), 400: ValidationErrorBody, 404: ErrorBody, 409: ErrorBody },
  },
  {
    operation: 'deleteAgentSchedule',
    method: 'DELETE',
    path: '/api/agents/{id}/schedules/{scheduleId}',
    auth: 'session',
    rateLimit: 'agents',
    summary: 'Delete a schedule; its past runs stay readable until they expire.',
    params: ScheduleParams,
    responses: { ...commonErrorResponses, 200: SuccessTrue, 404: ErrorBody },
  },
] as const satisfies readonly RouteDefinition[];
