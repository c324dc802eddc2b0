import { requestProvisioning } from '#adapters/provisioning-queue';
import { getInstance, type InstanceRecord, settleLaunch, transitionInstance } from '#data/instances';
import { logger } from '#platform/logger';
import { waitForStatus } from './wait-for-status';

/**
 * Wake on demand. An instance the platform stopped for idleness (`stopReason:
 * 'idle'`) is started again by the next thing that needs it: a chat, a channel message, a scheduled
 * run or an A2A message. Only idleness wakes: a stop the owner asked for (no `stopReason`) is never
 * undone, and a budget stop (`stopReason: 'budget'`) stays until the cap is raised (budget-guard's
 * `resumeIfUnderCap`), so nothing runs while over budget.
 *
 * The wake is the start route's own transition (`start`, queued for the provisioner), written only
 * while the instance is still stopped at the generation that was read: of any number of concurrent
 * wakes exactly one writes and launches, and the others find the launch it started (`wakeGeneration`
 * names it) and wait for the same one. The `instance.requested` event says `cause: 'wake'` and what
 * woke it (`details.wokenBy`).
 */

export type WakeSource = 'chat' | 'agent-chat' | 'channel' | 'schedule' | 'a2a' | 'edge';

const WOKEN_BY: Record<WakeSource, string> = {
  chat: 'a chat message (POST /api/chat)',
  'agent-chat': 'a chat message (POST /api/agent)',
  channel: 'an inbound channel message',
  schedule: 'a scheduled run',
  a2a: 'an agent-to-agent message',
  edge: "a request to the agent's own URL or websocket",
};

export type WakeOutcome =
  /** The instance runs (it already did, or woke within the wait). */
  | { state: 'running'; instance: InstanceRecord }
  /** A wake's launch is under way (ours or one we joined): `operationId` is its operation. */
  | { state: 'waking'; operationId: string; generation: number }
  /** Nothing to wake: no instance, stopped by its owner or its budget, failed. */
  | { state: 'asleep'; instance: InstanceRecord | undefined };

/** The launch a wake started, while it is still under way. */
const isWaking = (i: InstanceRecord) => i.status === 'provisioning' && i.wakeGeneration === i.generation;
const waking = (i: InstanceRecord): WakeOutcome => ({
  state: 'waking',
  operationId: i.operationId ?? `op_generation_${i.generation}`,
  generation: i.generation,
});

function where(instance: InstanceRecord | undefined): WakeOutcome {
  if (instance?.status === 'running') return { state: 'running', instance };
  if (instance && isWaking(instance)) return waking(instance);
  return { state: 'asleep', instance };
}

/** Starts an idle-stopped instance (one launch however many ask at once); does not wait. */
export async function requestWake(userId: string, source: WakeSource, now = new Date()): Promise<WakeOutcome> {
  const snap = await getInstance(userId, true);
  if (snap?.status !== 'stopped' || snap.stopReason !== 'idle') return where(snap);
  const { changed, after } = await transitionInstance(
    userId,
    'start',
    {
      cause: 'wake',
      expect: { generation: snap.generation, status: 'stopped' },
      jobOwner: (g) => `gen-${g}`,
      set: (current) => ({ wakeGeneration: current.generation + 1 }),
      reason: `woken by ${WOKEN_BY[source]}`,
      details: { wokenBy: source },
    },
    now,
  );
  // Another wake (or the owner) moved it first: join whatever it is now.
  if (!changed) return where(await getInstance(userId, true));
  try {
    await requestProvisioning({ kind: 'lifecycle', userId, generation: after.generation, op: 'start' });
  } catch (err) {
    await settleLaunch(userId, after.generation, { status: 'error', reason: 'the wake could not be queued' }, new Date(), 'wake');
    throw err;
  }
  logger().info('idle instance woken', { userId, generation: after.generation, wokenBy: source });
  return waking(after);
}

/**
 * Wakes the instance if it sleeps for idleness and waits, at most `timeoutMs`, until it runs.
 * `waking` past the wait: the launch goes on, and the caller keeps its message for later delivery.
 */
export async function wakeAndWait(userId: string, source: WakeSource, timeoutMs: number): Promise<WakeOutcome> {
  const woke = await requestWake(userId, source);
  if (woke.state !== 'waking') return woke;
  const { instance } = await waitForStatus(
    userId,
    'running',
    timeoutMs,
    (current) => current.generation !== woke.generation || current.status !== 'provisioning',
  );
  return where(instance);
}
