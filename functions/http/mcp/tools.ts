import type { CallToolResult, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import * as z from 'zod/mini';
import { allRoutes } from '#contract';
import { PutBudgetBody, CreateScheduleBody, UpdateScheduleBody } from '#contract/autonomy';
import { ResourceId } from '#contract/common';
import { AgentConfig } from '#contract/agent-records';
import { MAX_WAIT_SECONDS } from '#contract/instance';
import { SKILL_NAMES } from '#contract/skills';
import { CreateWebhookEndpointBody } from '#contract/webhooks';
import { chatWithAgent } from './chat';
import type { PlatformApi, RouteAnswer, RouteCall } from './platform-api';

/**
 * The MCP tools. Each names the contract operation it stands for and builds that route's call from
 * its arguments; the route answers, so a tool cannot drift from the API. `scope` is what an OAuth
 * access token must grant to call it (an API key or a session grants every scope).
 */

export type ToolScope = 'read' | 'agents' | 'billing';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What a tool runs against: the caller's own id and the platform API with the caller's credential. */
export interface Caller {
  userId: string;
  api: PlatformApi;
}

type Shape = Record<string, z.core.$ZodType>;

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  scope: ToolScope;
  annotations: Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint'>> & Pick<ToolAnnotations, 'openWorldHint'>;
  input: Shape;
  run: (args: Record<string, any>, caller: Caller, extra: ToolExtra) => Promise<CallToolResult>;
}

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;
/** Changes something, and the same call again leaves it as the first did. */
const SET = { readOnlyHint: false, destructiveHint: false, idempotentHint: true } as const;
/** Adds something: each call makes another. */
const ADD = { readOnlyHint: false, destructiveHint: false, idempotentHint: false } as const;
/** Removes or replaces what was there. */
const DESTROY = { readOnlyHint: false, destructiveHint: true, idempotentHint: true } as const;

/** A route's answer as a tool result: the JSON body, and `isError` with the route's `{error, code}` on a refusal. */
export function resultOf(answer: RouteAnswer): CallToolResult {
  const failed = answer.status >= 400;
  // A refusal names the route's status beside its body (whose own `status` field, where it has one, stays).
  const body = failed && answer.body && typeof answer.body === 'object' ? { httpStatus: answer.status, ...(answer.body as object) } : answer.body;
  const structured = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  return {
    content: [{ type: 'text', text: typeof body === 'string' ? body : JSON.stringify(body, null, 2) }],
    ...(structured ? { structuredContent: structured } : {}),
    ...(failed ? { isError: true } : {}),
  };
}

const agentId = () => ResourceId().check(z.describe("the agent's id (`agt_…`), as list_agents gives it"));
const WAITABLE = ['provisioning', 'running', 'stopped', 'error'] as const;
const waitFor = () =>
  z.optional(z.enum(WAITABLE)).check(z.describe(`wait (up to \`timeout\` seconds) until the instance reaches this status before answering`));
const timeout = () =>
  z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_WAIT_SECONDS))).check(z.describe(`seconds to wait at most (default ${MAX_WAIT_SECONDS})`));
const idempotencyKey = () =>
  z
    .optional(z.string().check(z.minLength(1), z.maxLength(255)))
    .check(z.describe('repeat a call with the same key to get the first answer instead of acting twice'));
const limit = () => z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(100))).check(z.describe('entries per page'));
const cursor = () => z.optional(z.string().check(z.maxLength(2048))).check(z.describe('the `cursor` of the previous page'));

/** A tool that is exactly one route call. */
const route =
  (build: (args: Record<string, any>, userId: string) => RouteCall) =>
  async (args: Record<string, any>, caller: Caller, extra: ToolExtra): Promise<CallToolResult> =>
    resultOf(await caller.api.call({ ...build(args, caller.userId), signal: extra.signal }));

/** An instance operation, then (with `waitFor`) the instance once it reached the status or the wait ran out. */
const lifecycle = (operation: string) => async (args: Record<string, any>, caller: Caller, extra: ToolExtra) => {
  const acted = await caller.api.call({
    operation,
    params: { userId: caller.userId },
    body: operation === 'updateInstance' && args.runtimeVersion ? { runtimeVersion: args.runtimeVersion } : undefined,
    signal: extra.signal,
  });
  if (acted.status >= 400 || !args.waitFor) return resultOf(acted);
  const waited = await caller.api.call({
    operation: 'getInstance',
    params: { userId: caller.userId },
    query: { waitFor: args.waitFor, timeout: args.timeout },
    signal: extra.signal,
  });
  if (waited.status >= 400) return resultOf(waited);
  return resultOf({ status: 200, body: { ...(acted.body as object), instance: waited.body } });
};

const lifecycleTools = (): ToolDefinition[] =>
  (
    [
      ['start_instance', 'startInstance', 'Start instance', "Start the account's agent instance (it runs every agent of the account).", SET],
      [
        'stop_instance',
        'stopInstance',
        'Stop instance',
        'Stop the instance; its agents stop answering until it is started again. Memory and history are kept.',
        DESTROY,
      ],
      [
        'restart_instance',
        'restartInstance',
        'Restart instance',
        'Stop and start the instance again (a fresh process with the current configuration).',
        DESTROY,
      ],
      [
        'update_instance',
        'updateInstance',
        'Update instance',
        'Move the instance to a runtime version (the newest when none is given) and restart it on it.',
        DESTROY,
      ],
      ['repair_instance', 'repairInstance', 'Repair instance', 'Replace an instance that is stuck or failing with a fresh one, keeping its data.', DESTROY],
      [
        'reset_instance_memory',
        'resetInstanceMemory',
        'Reset instance memory',
        "Erase the memory of every agent of the account and restart the instance. It cannot be undone: write_memory's values are gone.",
        DESTROY,
      ],
    ] as const
  ).map(([name, operation, title, description, annotations]) => ({
    name,
    title,
    description: `${description} Answers at once with the operation id and where the instance is now; give \`waitFor\` to wait for a status (like \`GET /api/instance/{userId}?waitFor=\`).`,
    scope: 'agents' as const,
    annotations,
    input: {
      waitFor: waitFor(),
      timeout: timeout(),
      ...(operation === 'updateInstance'
        ? { runtimeVersion: z.optional(z.string().check(z.minLength(1), z.maxLength(64))).check(z.describe('the runtime version')) }
        : {}),
    },
    run: lifecycle(operation),
  }));

/** The skills with a POST route of their own (`/api/skills/<name>`), and that route's operation. */
const skillOperations = new Map(
  allRoutes
    .filter((r) => r.group === 'skills' && r.method === 'POST' && /^\/api\/skills\/[a-z-]+$/.test(r.path))
    .map((r) => [r.path.slice('/api/skills/'.length), r.operation]),
);
const CALLABLE_SKILLS = SKILL_NAMES.filter((name) => skillOperations.has(name)) as [string, ...string[]];

/** The tools, built on the first request that needs them: no schema is built at a cold start (docs/architecture.md §11). */
let built: ToolDefinition[] | undefined;
export const tools = (): ToolDefinition[] => (built ??= buildTools());

const buildTools = (): ToolDefinition[] => [
  {
    name: 'list_agents',
    title: 'List agents',
    description: "The caller's agents with their status, model and websocket URL.",
    scope: 'read',
    annotations: READ,
    input: {},
    run: route(() => ({ operation: 'listAgents' })),
  },
  {
    name: 'get_agent',
    title: 'Get agent',
    description: 'One agent: status, model, configuration, instance and usage figures.',
    scope: 'read',
    annotations: READ,
    input: { agentId: agentId() },
    run: route((a) => ({ operation: 'getAgent', params: { id: a.agentId } })),
  },
  {
    name: 'provision_agent',
    title: 'Provision agent',
    description:
      "Create an agent within the plan's agent limit (needs an active subscription; admins are exempt) and start it on the account's instance. It is `provisioning` at first: call get_instance with `waitFor: running` to wait until it answers.",
    scope: 'agents',
    annotations: ADD,
    input: {
      name: z.string().check(z.minLength(1), z.maxLength(64), z.describe("the agent's name")),
      model: z
        .optional(z.string().check(z.minLength(1), z.maxLength(128)))
        .check(z.describe('the model the agent answers with (the platform default when omitted)')),
      config: z.optional(AgentConfig()).check(z.describe('system prompt, temperature, token limit, channels')),
    },
    run: route((a) => ({
      operation: 'provisionAgent',
      body: { name: a.name, ...(a.model ? { model: a.model } : {}), ...(a.config ? { config: a.config } : {}) },
    })),
  },
  {
    name: 'update_agent_config',
    title: 'Update agent configuration',
    description: "Replace an agent's configuration (system prompt, temperature, token limit, model, channels); a running instance reloads it.",
    scope: 'agents',
    annotations: SET,
    input: { agentId: agentId(), config: AgentConfig() },
    run: route((a) => ({ operation: 'updateAgentConfig', params: { id: a.agentId }, body: a.config })),
  },
  {
    name: 'get_instance',
    title: 'Get instance',
    description:
      "The account's instance: status, runtime version, URL. With `waitFor` the answer waits until the instance reaches that status or `timeout` passes, then says whether it got there (`reached`).",
    scope: 'read',
    annotations: READ,
    input: { waitFor: waitFor(), timeout: timeout() },
    run: route((a, userId) => ({ operation: 'getInstance', params: { userId }, query: { waitFor: a.waitFor, timeout: a.timeout } })),
  },
  ...lifecycleTools(),
  {
    name: 'chat_with_agent',
    title: 'Chat with agent',
    description:
      "Send a message to one of the caller's agents and get its answer; both are stored in the agent's history and metered like POST /api/chat. With a progressToken the answer arrives piece by piece as progress notifications, and whole as the result. An agent stopped for idleness is woken first.",
    scope: 'agents',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    input: { agentId: agentId(), message: z.string().check(z.minLength(1), z.maxLength(32_000), z.describe('what to say to the agent')) },
    run: chatWithAgent,
  },
  {
    name: 'get_agent_history',
    title: 'Get agent history',
    description: "Messages exchanged with an agent, newest first; page with `before` = the previous answer's `nextBefore`.",
    scope: 'read',
    annotations: READ,
    input: {
      agentId: agentId(),
      limit: limit(),
      before: z.optional(z.string().check(z.maxLength(64))).check(z.describe('only messages created before this time (`nextBefore` of the previous page)')),
    },
    run: route((a) => ({ operation: 'getChatMessages', query: { agentId: a.agentId, limit: a.limit, before: a.before } })),
  },
  {
    name: 'read_memory',
    title: 'Read memory',
    description: "Every key of an agent's memory with its value, and when it last changed.",
    scope: 'read',
    annotations: READ,
    input: { agentId: agentId() },
    run: route((a) => ({ operation: 'getMemory', query: { agentId: a.agentId } })),
  },
  {
    name: 'write_memory',
    title: 'Write memory',
    description:
      "Write one key (`key` + `value`) or several at once (`values`, up to 50 keys, all or nothing) of an agent's memory. A key written again is replaced; a running instance uses the change from its next answer.",
    scope: 'agents',
    annotations: SET,
    input: {
      agentId: agentId(),
      key: z.optional(z.string().check(z.minLength(1), z.maxLength(256))).check(z.describe('the key to write, with `value`')),
      value: z.optional(z.json()).check(z.describe('any JSON value, with `key`')),
      values: z.optional(z.record(z.string(), z.json())).check(z.describe('several keys at once: key → value')),
      idempotencyKey: idempotencyKey(),
    },
    run: route((a) => ({
      operation: 'writeMemory',
      body: a.values !== undefined ? { agentId: a.agentId, memory: a.values } : { agentId: a.agentId, key: a.key, memory: a.value ?? null },
      idempotencyKey: a.idempotencyKey,
    })),
  },
  {
    name: 'list_skills',
    title: 'List skills',
    description: 'The skill catalogue: every skill an agent can install, by category, with the featured ones.',
    scope: 'read',
    annotations: READ,
    input: { category: z.optional(z.string().check(z.maxLength(64))).check(z.describe('one category, or `all`')) },
    run: route((a) => ({ operation: 'listSkills', query: { category: a.category } })),
  },
  {
    name: 'list_installed_skills',
    title: 'List installed skills',
    description: "The skills installed on an agent, with their settings and the plan's per-agent limit.",
    scope: 'read',
    annotations: READ,
    input: { agentId: agentId() },
    run: route((a) => ({ operation: 'listInstalledSkills', params: { agentId: a.agentId } })),
  },
  {
    name: 'install_skill',
    title: 'Install skill',
    description: "Install a catalogue skill on an agent, within the plan's skill limit. Installing it again changes nothing.",
    scope: 'agents',
    annotations: SET,
    input: { agentId: agentId(), skillId: z.enum(SKILL_NAMES).check(z.describe('the skill, by its catalogue name')) },
    run: route((a) => ({ operation: 'installSkill', body: { agentId: a.agentId, skillId: a.skillId } })),
  },
  {
    name: 'call_skill',
    title: 'Call skill',
    description:
      "Run an operation of a skill (`POST /api/skills/<skill>`): `request` is that route's body, usually `{action, params}` (see the OpenAPI document for each skill). Metered skills are charged as their route charges.",
    scope: 'agents',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    input: {
      skill: z.enum(CALLABLE_SKILLS).check(z.describe('the skill to call')),
      request: z.record(z.string(), z.json()).check(z.describe("the skill route's body, e.g. `{action, params}`")),
      idempotencyKey: idempotencyKey(),
    },
    run: route((a) => ({ operation: skillOperations.get(a.skill)!, body: a.request, idempotencyKey: a.idempotencyKey })),
  },
  {
    name: 'get_event_log',
    title: 'Get event log',
    description: "The lifecycle event log of the account's instance and agents, oldest first: every transition with its time, operation id and cause.",
    scope: 'read',
    annotations: READ,
    input: { limit: limit(), cursor: cursor() },
    run: route((a, userId) => ({ operation: 'listInstanceEvents', params: { userId }, query: { limit: a.limit, cursor: a.cursor } })),
  },
  {
    name: 'get_agent_log',
    title: 'Get agent log',
    description: "An agent's own log: what it did, answered and failed at, newest first.",
    scope: 'read',
    annotations: READ,
    input: { agentId: agentId(), limit: limit(), cursor: cursor() },
    run: route((a) => ({ operation: 'getAgentLogs', params: { id: a.agentId }, query: { limit: a.limit, cursor: a.cursor } })),
  },
  {
    name: 'get_usage',
    title: 'Get usage',
    description:
      'Usage of the current billing period: credits from the ledger, model tokens, cost and agent-to-agent messages per model and per agent, and the included allowance.',
    scope: 'billing',
    annotations: READ,
    input: {},
    run: route(() => ({ operation: 'postBilling', body: { action: 'get-usage' } })),
  },
  {
    name: 'get_budget',
    title: 'Get budget',
    description: "The monthly spending cap and this month's spend, of the account or (with `agentId`) of one agent.",
    scope: 'billing',
    annotations: READ,
    input: { agentId: z.optional(agentId()) },
    run: route((a) => (a.agentId ? { operation: 'getAgentBudget', params: { id: a.agentId } } : { operation: 'getAccountBudget' })),
  },
  {
    name: 'set_budget',
    title: 'Set budget',
    description:
      'Set (or with null remove) the monthly spending cap in USD of the account or (with `agentId`) of one agent. At the cap, metered calls are refused and what the cap covers is paused.',
    scope: 'billing',
    annotations: SET,
    input: { agentId: z.optional(agentId()), ...PutBudgetBody().shape },
    run: route((a) =>
      a.agentId
        ? { operation: 'putAgentBudget', params: { id: a.agentId }, body: { monthlyCapUsd: a.monthlyCapUsd } }
        : { operation: 'putAccountBudget', body: { monthlyCapUsd: a.monthlyCapUsd } },
    ),
  },
  {
    name: 'list_schedules',
    title: 'List schedules',
    description: "An agent's schedules: the prompts it runs by cron or once at a time, with their last runs.",
    scope: 'read',
    annotations: READ,
    input: { agentId: agentId() },
    run: route((a) => ({ operation: 'listAgentSchedules', params: { id: a.agentId } })),
  },
  {
    name: 'create_schedule',
    title: 'Create schedule',
    description: 'Have an agent run a prompt on a cron schedule (UTC) or once at a time; each run is metered like a chat message.',
    scope: 'agents',
    annotations: ADD,
    input: { agentId: agentId(), ...CreateScheduleBody().shape },
    run: route(({ agentId: id, ...body }) => ({ operation: 'createAgentSchedule', params: { id }, body })),
  },
  {
    name: 'update_schedule',
    title: 'Pause or resume schedule',
    description: "Pause or resume one of an agent's schedules.",
    scope: 'agents',
    annotations: SET,
    input: { agentId: agentId(), scheduleId: ResourceId(), ...UpdateScheduleBody().shape },
    run: route((a) => ({ operation: 'updateAgentSchedule', params: { id: a.agentId, scheduleId: a.scheduleId }, body: { paused: a.paused } })),
  },
  {
    name: 'delete_schedule',
    title: 'Delete schedule',
    description: "Delete one of an agent's schedules; runs already made stay in its history.",
    scope: 'agents',
    annotations: DESTROY,
    input: { agentId: agentId(), scheduleId: ResourceId() },
    run: route((a) => ({ operation: 'deleteAgentSchedule', params: { id: a.agentId, scheduleId: a.scheduleId } })),
  },
  {
    name: 'list_webhook_endpoints',
    title: 'List webhook endpoints',
    description: "The URLs the account's events are delivered to (Standard Webhooks), with the events each takes.",
    scope: 'read',
    annotations: READ,
    input: {},
    run: route(() => ({ operation: 'listWebhookEndpoints' })),
  },
  {
    name: 'create_webhook_endpoint',
    title: 'Create webhook endpoint',
    description:
      "Deliver the account's events (all, or the given filters such as `instance.*`) to a URL. The signing secret (`whsec_…`) is shown once, in this answer.",
    scope: 'agents',
    annotations: { ...ADD, openWorldHint: true },
    input: { ...CreateWebhookEndpointBody().shape },
    run: route((body) => ({ operation: 'createWebhookEndpoint', body })),
  },
  {
    name: 'delete_webhook_endpoint',
    title: 'Delete webhook endpoint',
    description: 'Stop delivering events to an endpoint and delete it.',
    scope: 'agents',
    annotations: DESTROY,
    input: { endpointId: ResourceId() },
    run: route((a) => ({ operation: 'deleteWebhookEndpoint', params: { id: a.endpointId } })),
  },
];
