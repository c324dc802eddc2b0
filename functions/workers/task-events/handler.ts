import type { EventBridgeEvent } from 'aws-lambda';
import { isHealthy, RUNTIME_PORT } from '#adapters/launcher';
import { startDefaultHeartbeat } from '#data/heartbeat';
import { gatewayToken, getInstance, settleLaunch, settlePendingAgents } from '#data/instances';
import { logger } from '#http/logger';
import { relaunchAfterExit } from '#domain/lifecycle/relaunch';

/**
 * ECS task state changes (EventBridge), the AWS side of readiness: the provisioner launched the
 * task with `group: agent-platform:<userId>` and `startedBy: gen-<generation>`.
 * - RUNNING for the current launch → one health probe; healthy → `running` (the provisioner's own
 *   polling may get there first; whichever lands second finds nothing to do).
 * - STOPPED for the current task of a running instance → relaunched (domain/lifecycle/relaunch.ts:
 *   backoff, a bound per hour, then `error` with the stoppedReason).
 * - STOPPED for the task of a launch under way → `error` (it never started); agents waiting for it
 *   fail and get their quota back.
 */

export interface TaskStateDetail {
  taskArn?: string;
  lastStatus?: string;
  group?: string;
  startedBy?: string;
  stoppedReason?: string;
  attachments?: { type?: string; details?: { name?: string; value?: string }[] }[];
}

const GROUP_PREFIX = 'agent-platform:';

function identify(detail: TaskStateDetail): { userId: string; generation: number } | undefined {
  if (!detail.group?.startsWith(GROUP_PREFIX)) return undefined;
  const generation = Number(/^gen-(\d+)$/.exec(detail.startedBy ?? '')?.[1]);
  const userId = detail.group.slice(GROUP_PREFIX.length);
  return userId && Number.isInteger(generation) && generation > 0 ? { userId, generation } : undefined;
}

const privateIp = (detail: TaskStateDetail) =>
  detail.attachments?.find((a) => a.type === 'ElasticNetworkInterface')?.details?.find((d) => d.name === 'privateIPv4Address')?.value;

export const handler = async (event: EventBridgeEvent<'ECS Task State Change', TaskStateDetail>): Promise<void> => {
  const detail = event.detail ?? {};
  const task = identify(detail);
  if (!task || !detail.taskArn) return;
  const instance = await getInstance(task.userId, true);
  if (!instance || instance.generation !== task.generation) return;

  if (detail.lastStatus === 'RUNNING' && instance.status === 'provisioning') {
    const ip = privateIp(detail);
    if (!ip) return;
    const endpoint = `http://${ip}:${RUNTIME_PORT}`;
    if (!(await isHealthy(endpoint, await gatewayToken(task.userId)))) return;
    const handle = { ...(instance.handle ?? {}), launcher: 'ecs' as const, id: detail.taskArn, endpoint, generation: task.generation };
    if (await settleLaunch(task.userId, task.generation, { status: 'running', set: { handle } })) {
      await startDefaultHeartbeat(task.userId);
      logger().info('instance running (task event)', { userId: task.userId, generation: task.generation });
    }
    return;
  }

  if (detail.lastStatus === 'STOPPED' && instance.status === 'running' && instance.handle?.id === detail.taskArn) {
    // A task that ran and stopped without the owner asking is relaunched (with backoff, bounded per hour).
    const exit = detail.stoppedReason ? `the task stopped: ${detail.stoppedReason}` : 'the task stopped';
    await relaunchAfterExit({ userId: task.userId, generation: task.generation, handleId: detail.taskArn, reason: exit });
    return;
  }

  if (detail.lastStatus === 'STOPPED' && instance.status === 'provisioning' && instance.handle?.id === detail.taskArn) {
    const reason = `the task stopped${detail.stoppedReason ? `: ${detail.stoppedReason}` : ''}`;
    if (await settleLaunch(task.userId, task.generation, { status: 'error', reason, failWaiting: true })) {
      logger().warn('instance task stopped', { userId: task.userId, generation: task.generation, reason });
      await settlePendingAgents(task.userId, reason);
    }
  }
};
