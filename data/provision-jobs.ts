import { randomBytes } from 'node:crypto';
import * as keys from './keys';
import { ConditionFailedError, tenant } from './tenant';

/**
 * Idempotency records of the provisioner, one per unit of work (`agent-<agentId>`,
 * `gen-<generation>`), claimed with a conditional put. Of ten concurrent deliveries of one message
 * one claims it; the others find it `running` (busy: retried later) or `done` (acknowledged). A
 * claim that outlives its lease (the worker died) can be taken over; a failed attempt releases it.
 */

/** Longer than the provisioner's 120 s timeout, so a live worker never loses its claim. */
const LEASE_MS = 150_000;
/** Done records are kept a week: SQS redelivers within its retention, far shorter. */
const DONE_TTL_SECONDS = 7 * 24 * 3600;

/** The unit of work of one agent's first launch (its queue message of kind `agent`). */
export const agentJobId = (agentId: string) => `agent-${agentId}`;

export type Claim = { state: 'claimed'; token: string } | { state: 'done' } | { state: 'busy' };

export async function claimJob(userId: string, jobId: string, now = Date.now()): Promise<Claim> {
  const store = tenant(userId);
  const token = randomBytes(12).toString('hex');
  try {
    await store.put(
      {
        ...keys.provisionJob(userId, jobId),
        state: 'running',
        claimToken: token,
        claimedAt: now,
        leaseUntil: now + LEASE_MS,
        expiresAt: Math.floor(now / 1000) + DONE_TTL_SECONDS,
      },
      {
        expression: 'attribute_not_exists(pk) OR (#state = :running AND leaseUntil < :now)',
        names: { '#state': 'state' },
        values: { ':running': 'running', ':now': now },
      },
    );
    return { state: 'claimed', token };
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    const existing = await store.get<{ state?: string }>(keys.provisionJob(userId, jobId), true);
    return existing?.state === 'done' ? { state: 'done' } : { state: 'busy' };
  }
}

export async function completeJob(userId: string, jobId: string, token: string): Promise<void> {
  try {
    await tenant(userId).update(
      keys.provisionJob(userId, jobId),
      {
        expression: 'SET #state = :done, doneAt = :at REMOVE claimToken, leaseUntil, claimedAt',
        names: { '#state': 'state' },
        values: { ':done': 'done', ':at': new Date().toISOString() },
      },
      { expression: 'claimToken = :token', values: { ':token': token } },
    );
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}

/** A failed attempt gives the work back at once, so the retry is not held up by the lease. */
export async function releaseJob(userId: string, jobId: string, token: string): Promise<void> {
  try {
    await tenant(userId).delete(keys.provisionJob(userId, jobId), { expression: 'claimToken = :token', values: { ':token': token } });
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}

export type JobState = { state: 'none' } | { state: 'done' } | { state: 'claimed'; token: string; claimedAt: number; leaseUntil: number };

/** Where one unit of work stands (the stranded-work reconciler decides from it whether a worker still holds it). */
export async function jobState(userId: string, jobId: string): Promise<JobState> {
  const item = await tenant(userId).get<{ state?: string; claimToken?: string; claimedAt?: number; leaseUntil?: number }>(
    keys.provisionJob(userId, jobId),
    true,
  );
  if (!item) return { state: 'none' };
  if (item.state === 'done') return { state: 'done' };
  const leaseUntil = Number(item.leaseUntil ?? 0);
  return { state: 'claimed', token: String(item.claimToken ?? ''), leaseUntil, claimedAt: Number(item.claimedAt ?? leaseUntil - LEASE_MS) };
}
