import * as z from 'zod';
import { ResourceId } from './memory';
import { commonErrorResponses, defineGroup, ErrorBody, IsoDate } from './route';

const IdParams = z.strictObject({ id: ResourceId });

export const AGENT_LOG_DEFAULT_LIMIT = 50;
export const AGENT_LOG_MAX_LIMIT = 200;
export const AGENT_LOG_MAX_FOLLOW_SECONDS = 300;
export const AGENT_LOG_RETENTION_DAYS = 7;

/** One entry of the per-agent log (`GET /api/agents/{id}/logs`). */
export const AgentLogEntry = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('runtime'),
    id: z.string(),
    at: IsoDate,
    stream: z.enum(['stdout', 'stderr', 'runtime']).describe('`runtime` when the runtime reported the line itself'),
    level: z.string().nullable(),
    line: z.string(),
  }),
  z.object({ kind: z.literal('message'), id: z.string(), at: IsoDate, role: z.enum(['user', 'assistant', 'system']), content: z.string() }),
  z.object({
    kind: z.literal('lifecycle'),
    id: z.string(),
    at: IsoDate,
    type: z.string(),
    op: z.string().nullable(),
    status: z.string().nullable(),
    reason: z.string().nullable(),
    operationId: z.string().nullable(),
  }),
]);

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
      query: z.strictObject({
        limit: z.coerce
          .number()
          .int()
          .min(1)
          .max(AGENT_LOG_MAX_LIMIT)
          .default(AGENT_LOG_DEFAULT_LIMIT)
          .describe(`entries per page (default ${AGENT_LOG_DEFAULT_LIMIT})`),
        cursor: z.string().max(512).optional().describe('the `cursor` of the previous page'),
        follow: z.coerce
          .number()
          .int()
          .min(0)
          .max(AGENT_LOG_MAX_FOLLOW_SECONDS)
          .default(0)
          .describe('event stream only: seconds to keep sending new entries (default 0)'),
      }),
      responses: {
        ...commonErrorResponses,
        200: z.object({ entries: z.array(AgentLogEntry), cursor: z.string().nullable() }),
        404: ErrorBody,
      },
    },
  ],
});
