import * as z from 'zod';
import { ResourceId } from './memory';
import { commonErrorResponses, ErrorBody, type RouteDefinition, ValidationErrorBody } from './route';

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
