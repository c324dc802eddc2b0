import { lazyClient } from '#platform/lazy/aws-client';
import { config, runtimeLogsConfig } from '#platform/config';

/**
 * The runtime's output in AWS: the task definition sends the container's stdout and stderr to
 * CloudWatch Logs with the awslogs driver (lib/constructs/compute.ts), one stream per task named
 * `<stream prefix>/<container name>/<task id>`. The per-agent log reads an instance's stream back
 * from here; RUNTIME_LOG_GROUP names the group (the stack sets it), CLOUDWATCH_LOGS_ENDPOINT points
 * the client elsewhere (a loopback fake in the tests).
 */

/** The awslogs stream prefix and container name of the runtime task (lib/constructs/compute.ts uses the same). */
export const RUNTIME_LOG_STREAM_PREFIX = 'runtime';
export const RUNTIME_CONTAINER_NAME = 'runtime';

/** The stream of a task, from its ARN (`arn:aws:ecs:<region>:<account>:task/<cluster>/<task id>`). */
export const runtimeLogStreamOf = (taskArn: string) => `${RUNTIME_LOG_STREAM_PREFIX}/${RUNTIME_CONTAINER_NAME}/${taskArn.split('/').at(-1)}`;

export interface LogStreamEvent {
  /** Epoch ms the line was written (the driver's time stamp). */
  timestamp: number;
  /** Epoch ms CloudWatch took it in. */
  ingestionTime: number;
  message: string;
}

export interface LogStreamPage {
  /** Newest first. */
  events: LogStreamEvent[];
  /** Undefined once the start of the stream (or of the time range) is reached. */
  next?: string;
}

/** Loaded on the first read: only the per-agent log's reads in AWS reach CloudWatch Logs. */
const logsClient = /* @__PURE__ */ lazyClient(
  () => import('#platform/lazy/aws-cloudwatch-logs'),
  (sdk) => {
    const endpoint = runtimeLogsConfig().endpoint;
    return new sdk.CloudWatchLogsClient({
      region: config().region,
      maxAttempts: 3,
      ...(endpoint ? { endpoint, credentials: config().localCredentials ?? { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    });
  },
);

export function resetCloudWatchLogsClient(): void {
  logsClient.reset();
}

/** Whether runtime output is read from CloudWatch Logs here (the stack sets the group). */
export const runtimeLogsInCloudWatch = () => !!runtimeLogsConfig().group;

/**
 * One page of a stream read backwards (GetLogEvents with startFromHead false) over
 * [startTime, endTime) in epoch ms; `token` continues an earlier page. A stream that does not
 * exist (yet) reads as empty.
 */
export async function readLogStreamBack(stream: string, range: { startTime: number; endTime: number }, limit: number, token?: string): Promise<LogStreamPage> {
  const group = runtimeLogsConfig().group;
  if (!group) throw new Error('RUNTIME_LOG_GROUP is not set');
  const { client, sdk } = await logsClient.get();
  try {
    const out = await client.send(
      new sdk.GetLogEventsCommand({
        logGroupName: group,
        logStreamName: stream,
        startTime: range.startTime,
        endTime: range.endTime,
        startFromHead: false,
        limit: Math.min(10_000, Math.max(1, limit)),
        nextToken: token,
      }),
    );
    const events = (out.events ?? [])
      .map((e) => ({ timestamp: Number(e.timestamp ?? 0), ingestionTime: Number(e.ingestionTime ?? 0), message: e.message ?? '' }))
      .reverse();
    // At the start of the stream CloudWatch hands back the token it was given.
    const next = out.nextBackwardToken && out.nextBackwardToken !== token ? out.nextBackwardToken : undefined;
    return { events, next };
  } catch (err) {
    // By name, not `instanceof`: the error class would bring the client back into the static imports.
    if ((err as { name?: string }).name === 'ResourceNotFoundException') return { events: [] };
    throw err;
  }
}
