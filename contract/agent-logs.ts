import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId } from './common';
import { defineGroup, lazySchema } from './route';

const IdParams = lazySchema(() => z.strictObject({ id: ResourceId() }));

export const AGENT_LOG_DEFAULT_LIMIT = 50;
export const AGENT_LOG_MAX_LIMIT = 200;
export const AGENT_LOG_MAX_FOLLOW_SECONDS = 300;
export const AGENT_LOG_RETENTION_DAYS = 7;

/** One entry of the per-agent log (`GET /api/agents/{id}/logs`). */
export const AgentLogEntry = lazySchema(() =>
  z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('runtime'),
      id: z.string(),
      at: IsoDate(),
      stream: z.enum(['stdout', 'stderr', 'runtime']).check(z.describe('`runtime` when the runtime reported the line itself')),
      level: z.nullable(z.string()),
      line: z.string(),
    }),
    z.object({ kind: z.literal('message'), id: z.string(), at: IsoDate(), role: z.enum(['user', 'assistant', 'system']), content: z.string() }),
    z.object({
      kind: z.literal('lifecycle'),
      id: z.string(),
      at: IsoDate(),
      type: z.string(),
      op: z.nullable(z.string()),
      status: z.nullable(z.string()),
      reason: z.nullable(z.string()),
      operationId: z.nullable(z.string()),
    }),
  ]),
);

export const agentLogsContract = defineGroup({
  group: 'agent-logs',
  description:
    "An owned agent's log, rate limited by the `agents` scope like the agents group; apart from it because it reads the runtime's CloudWatch Logs stream.",
  dynamoOnly: false,
  routes: [
    {
      operation: 'getAgentLogs',
      method: 'GET',
      path: '/api/agents/{id}/logs',
      auth: 'session',
      rateLimit: 'agents',
      summary: "The owned agent's recent log, newest first: runtime log lines, lifecycle events and message exchanges.",
      description: [
        "Merged from the instance's runtime log lines (the runtime's own JSON lines and its other output: in AWS read from the CloudWatch Logs stream of",
        "the instance's current task, locally captured by the launcher; lines that name no agent belong",
        `to every agent of the instance; kept ${AGENT_LOG_RETENTION_DAYS} days), the lifecycle events of the agent and its instance, and its messages.`,
        '`cursor` continues where the previous page ended (null on the last page).',
        'With `Accept: text/event-stream` the answer is server-sent events: `entry` per log entry, oldest first (the newest `limit` entries), then, for',
        '`follow` seconds, each new entry as it is stored, then `end` `{cursor}`. The local stack streams them as they come; API Gateway HTTP APIs buffer',
        'responses, so there the events arrive in one body when the stream ends.',
      ].join(' '),
      params: IdParams,
      query: () =>
        z.strictObject({
          limit: z
            ._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(AGENT_LOG_MAX_LIMIT)), AGENT_LOG_DEFAULT_LIMIT)
            .check(z.describe(`entries per page (default ${AGENT_LOG_DEFAULT_LIMIT})`)),
          cursor: z.optional(z.string().check(z.maxLength(512))).check(z.describe('the `cursor` of the previous page')),
          follow: z
            ._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(AGENT_LOG_MAX_FOLLOW_SECONDS)), 0)
            .check(z.describe('event stream only: seconds to keep sending new entries (default 0)')),
        }),
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ entries: z.array(AgentLogEntry()), cursor: z.nullable(z.string()) }),
        404: ErrorBody(),
      }),
    },
  ],
});
