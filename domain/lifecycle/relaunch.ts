import { requestProvisioning } from '#adapters/provisioning-queue';
import { healingConfig } from '#platform/config';
import { getInstance, settleLaunch, settlePendingAgents, transitionInstance } from '#data/instances';
import { logger } from '#platform/logger';
import { mailLaunchFailure } from './failure-notice';

/**
 * Instances that heal: a running instance whose process or task ended without anyone
 * asking (the local child's `exit`, an ECS task-state event `STOPPED`) goes through the ordinary
 * lifecycle again: a `restart` with cause `self-heal`, written only while the instance is still at
 * the generation that died and still `running`. So a stop the owner asked for (status `stopped`)
 * and any newer operation (a new generation) always win, and two reports of one exit relaunch once.
 * The launch itself is the provisioner's, queued with the backoff as the message's delay. Past the
 * hourly bound the instance is `error` with the exit's reason instead.
 */

const HOUR_MS = 3_600_000;

export interface UnexpectedExit {
  userId: string;
  /** The generation whose process ended. */
  generation: number;
  /** The process id or task ARN that ended: only the instance's current one counts. */
  handleId: string;
  /** What the exit said: `exit code 1`, `signal SIGKILL`, the ECS stoppedReason. */
  reason: string;
}

export type RelaunchResult =
  | { outcome: 'relaunching'; generation: number; delaySeconds: number; relaunchesThisHour: number }
  | { outcome: 'gave-up'; reason: string }
  | { outcome: 'ignored' };

export async function relaunchAfterExit(exit: UnexpectedExit, now = new Date()): Promise<RelaunchResult> {
  const { userId, generation } = exit;
  const snap = await getInstance(userId, true);
  if (snap?.status !== 'running' || snap.generation !== generation || snap.handle?.id !== exit.handleId) return { outcome: 'ignored' };
  const { relaunchesPerHour, backoffSeconds } = healingConfig();
  const recent = (snap.relaunchesAt ?? []).filter((at) => at > now.getTime() - HOUR_MS);

  if (recent.length >= relaunchesPerHour) {
    const reason = `the instance exited unexpectedly (${exit.reason}) after ${recent.length} relaunches within an hour, the most allowed`;
    if (!(await settleLaunch(userId, generation, { status: 'error', reason, failWaiting: true }, now, 'self-heal'))) return { outcome: 'ignored' };
    logger().warn('instance exited too often; left in error', { userId, generation, exit: exit.reason });
    await settlePendingAgents(userId, reason);
    await mailLaunchFailure(userId, generation, reason, 'exits');
    return { outcome: 'gave-up', reason };
  }

  const delaySeconds = backoffSeconds[Math.min(recent.length, backoffSeconds.length - 1)] ?? 0;
  const relaunchesThisHour = recent.length + 1;
  const { changed, after } = await transitionInstance(
    userId,
    'restart',
    {
      cause: 'self-heal',
      expect: { generation, status: 'running' },
      jobOwner: (next) => `gen-${next}`,
      set: () => ({ relaunchesAt: [...recent, now.getTime()] }),
      reason: `the instance exited unexpectedly (${exit.reason}); relaunch ${relaunchesThisHour} of at most ${relaunchesPerHour} this hour, in ${delaySeconds} s`,
    },
    now,
  );
  if (!changed) return { outcome: 'ignored' };
  try {
    await requestProvisioning({ kind: 'lifecycle', userId, generation: after.generation, op: 'restart' }, { delaySeconds });
  } catch (err) {
    await settleLaunch(
      userId,
      after.generation,
      { status: 'error', reason: `the instance exited unexpectedly (${exit.reason}) and its relaunch could not be queued` },
      new Date(),
      'self-heal',
    );
    throw err;
  }
  logger().warn('instance exited unexpectedly; relaunching', { userId, generation: after.generation, exit: exit.reason, delaySeconds, relaunchesThisHour });
  return { outcome: 'relaunching', generation: after.generation, delaySeconds, relaunchesThisHour };
}
