import { heartbeatConfig } from '#platform/config';
import { listAgents } from '#data/agents';
import { claimHeartbeat, dueHeartbeats, HEARTBEAT_DUE_SHARDS, type HeartbeatBaseline, type HeartbeatRecord } from '#data/heartbeat';
import { getInstance, settleLaunch } from '#data/instances';
import { recordSample } from '#data/metrics';
import { logger } from '#http/logger';
import { checkInstance } from './check';

/**
 * One heartbeat run (EventBridge every 5 minutes in AWS, a timer in the local stack):
 * 1. reads the due heartbeats from gsi1, shard by shard (reads grow with the due users only);
 * 2. per due user: claims the heartbeat (advances lastHeartbeat/nextHeartbeat on the condition that
 *    nextHeartbeat is still the one read, so overlapping runs never both take a user), then, when
 *    the account's instance is running, checks its health, records a metrics sample, and marks an
 *    instance that failed the check `error` (its agents take that status with it).
 * A user with no running instance only has the heartbeat advanced: a sample measures a running
 * instance, so none is invented for one that is not there. The claim comes first, so a run that
 * dies mid-check skips that user's sample until the next due time rather than doubling it.
 */

export interface SweepOptions {
  now?: Date;
  maxUsers?: number;
  concurrency?: number;
  /** Stop taking new users after this epoch-ms (the Lambda's remaining time); the rest stay due. */
  deadline?: number;
  retryPauseMs?: number;
}

export interface SweepResult {
  due: number;
  claimed: number;
  sampled: number;
  markedUnhealthy: number;
}

const PAGE = 100;

async function readDue(now: Date, maxUsers: number): Promise<HeartbeatRecord[]> {
  const perShard = Math.ceil(maxUsers / HEARTBEAT_DUE_SHARDS);
  const shards = Array.from({ length: HEARTBEAT_DUE_SHARDS }, (_, shard) => shard);
  const lists = await Promise.all(
    shards.map(async (shard) => {
      const found: HeartbeatRecord[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await dueHeartbeats(shard, now, Math.min(PAGE, perShard - found.length), start);
        found.push(...page.items);
        start = page.next;
      } while (start && found.length < perShard);
      return found;
    }),
  );
  return lists.flat();
}

async function agentTotals(userId: string): Promise<HeartbeatBaseline> {
  const agents = await listAgents(userId);
  return agents.reduce<HeartbeatBaseline>(
    (t, a) => ({
      messages: t.messages + Number(a.messagesProcessed ?? 0),
      errors: t.errors + Number(a.messagesFailed ?? 0),
      responseMsTotal: t.responseMsTotal + Number(a.responseMsTotal ?? 0),
    }),
    { messages: 0, errors: 0, responseMsTotal: 0 },
  );
}

const since = (now: number, before: number | undefined) => Math.max(0, now - (before ?? now));

type Outcome = 'lost' | 'advanced' | 'sampled' | 'unhealthy';

async function beatOne(item: HeartbeatRecord, now: Date, retryPauseMs?: number): Promise<Outcome> {
  const { userId } = item;
  const instance = await getInstance(userId);
  const running = instance?.status === 'running';
  const totals = running ? await agentTotals(userId) : undefined;
  if (!(await claimHeartbeat(item, now, totals))) return 'lost';
  if (!running || !instance || !totals) return 'advanced';

  const check = await checkInstance(userId, instance, retryPauseMs);
  // The first sample after switching on has no earlier figures to count from, so it counts none.
  const base = item.baseline ?? totals;
  await recordSample(userId, {
    timestamp: now.toISOString(),
    cpu: check.cpu,
    memory: check.memory,
    messages: since(totals.messages, base.messages),
    errors: since(totals.errors, base.errors),
    responseMsTotal: since(totals.responseMsTotal, base.responseMsTotal),
    reachable: check.reachable,
    healthy: check.healthy,
  });
  if (check.healthy) return 'sampled';
  const reason = check.reachable ? 'the instance answered its heartbeat health check unhealthy' : 'the instance did not answer its heartbeat health check';
  const marked = await settleLaunch(userId, instance.generation, { status: 'error', reason }, now, 'heartbeat');
  logger().warn('heartbeat found an unhealthy instance', { userId, generation: instance.generation, reachable: check.reachable, marked: !!marked });
  return marked ? 'unhealthy' : 'sampled';
}

export async function runHeartbeat(opts: SweepOptions = {}): Promise<SweepResult> {
  const settings = heartbeatConfig();
  const now = opts.now ?? new Date();
  const due = await readDue(now, opts.maxUsers ?? settings.maxUsersPerRun);
  const result: SweepResult = { due: due.length, claimed: 0, sampled: 0, markedUnhealthy: 0 };
  let next = 0;
  const worker = async () => {
    while (next < due.length && (opts.deadline === undefined || Date.now() < opts.deadline)) {
      const item = due[next++]!;
      try {
        const outcome = await beatOne(item, now, opts.retryPauseMs);
        if (outcome !== 'lost') result.claimed += 1;
        if (outcome === 'sampled' || outcome === 'unhealthy') result.sampled += 1;
        if (outcome === 'unhealthy') result.markedUnhealthy += 1;
      } catch (err) {
        // One account's failure (a throttled write, a broken record) never stops the others.
        logger().error('heartbeat of one user failed', { userId: item.userId, error: err as Error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? settings.concurrency) }, worker));
  return result;
}
