import * as keys from './keys';
import { ConditionFailedError, tenant } from './tenant';

/**
 * The loop breaker's window state (domain/ai/loop-breaker.ts has the rules). Two bounded record
 * families per agent, both expiring with their window (`expiresAt` is the table's TTL attribute):
 * - `LOOPSIG#<agentId>#<signature>`: how many calls with that signature since `windowStart`;
 * - `LOOPSPEND#<agentId>`: the agent's spend since `windowStart`.
 * Each call costs one conditional update on each: it adds to a window still open, or starts a new
 * one when the stored window has passed (a window opens at its first call, so a burst is never split
 * by a boundary). The trip is a conditional write on the agent item: of any number of concurrent
 * calls past the threshold, exactly one pauses the agent.
 */

export interface LoopTrip {
  kind: 'repeated-call' | 'spend-velocity';
  /** The repeated call's signature and what it was (`model` or `skill:<name>`). */
  signature?: string;
  call?: string;
  count?: number;
  windowSeconds: number;
  /** The agent's spend in the window (USD at catalogue price) and the monthly cap it is measured against. */
  spentUsd: number;
  monthlyCapUsd?: number;
  at: string;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** Adds the amounts to a windowed counter item and answers the totals of its open window. */
async function addInWindow(userId: string, key: keys.Key, amounts: Record<string, number>, windowSeconds: number, now: Date): Promise<Record<string, number>> {
  const t = seconds(now);
  const fields = Object.keys(amounts);
  const names = Object.fromEntries(fields.map((f, i) => [`#v${i}`, f]));
  const values = Object.fromEntries(fields.map((f, i) => [`:v${i}`, amounts[f]!]));
  const totals = (item: Record<string, unknown>) => Object.fromEntries(fields.map((f) => [f, Number(item[f])]));
  for (let attempt = 0; attempt < 4; attempt += 1) {
    try {
      const item = await tenant(userId).update<Record<string, unknown>>(
        key,
        { expression: `ADD ${fields.map((_, i) => `#v${i} :v${i}`).join(', ')}`, names, values },
        { expression: 'windowStart > :cutoff', values: { ':cutoff': t - windowSeconds } },
      );
      return totals(item);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
    }
    try {
      await tenant(userId).update(
        key,
        {
          expression: `SET ${fields.map((_, i) => `#v${i} = :v${i}`).join(', ')}, windowStart = :now, expiresAt = :expires`,
          names,
          values: { ...values, ':now': t, ':expires': t + windowSeconds },
        },
        { expression: 'attribute_not_exists(windowStart) OR windowStart <= :cutoff', values: { ':cutoff': t - windowSeconds } },
      );
      return { ...amounts };
    } catch (err) {
      // Another call opened the new window first: count in it.
      if (!(err instanceof ConditionFailedError)) throw err;
    }
  }
  throw new Error('the loop window kept conflicting');
}

/** Counts one call with this signature; answers how many the open window holds, this one included. */
export const countSignature = async (userId: string, agentId: string, signature: string, windowSeconds: number, now = new Date()) =>
  (await addInWindow(userId, keys.loopSignature(userId, agentId, signature), { calls: 1 }, windowSeconds, now)).calls!;

/** Adds a settled call's cost to the agent's spend window; answers the window's spend and call count. */
export const addWindowSpend = async (userId: string, agentId: string, costUsd: number, windowSeconds: number, now = new Date()) => {
  const { spentUsd, calls } = await addInWindow(userId, keys.loopSpend(userId, agentId), { spentUsd: costUsd, calls: 1 }, windowSeconds, now);
  return { spentUsd: spentUsd!, calls: calls! };
};

/** Pauses the agent for a loop, with the evidence; false when the loop breaker already paused it (or it is gone): the trip happens once. A budget pause stays as it is. */
export async function tripLoopBreaker(userId: string, agentId: string, trip: LoopTrip): Promise<boolean> {
  try {
    await tenant(userId).update(
      keys.agent(userId, agentId),
      { expression: 'SET loopTrip = :trip', values: { ':trip': trip } },
      { expression: 'attribute_exists(pk) AND attribute_not_exists(loopTrip)' },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/**
 * Lifts the loop breaker's pause (a budget pause stays) and clears the agent's windows (at most a
 * window's worth of signatures), so the resumed agent starts counting afresh; false when the agent
 * is not paused by the loop breaker.
 */
export async function resumeFromLoop(userId: string, agentId: string): Promise<boolean> {
  try {
    await tenant(userId).update(keys.agent(userId, agentId), { expression: 'REMOVE loopTrip' }, { expression: 'attribute_exists(loopTrip)' });
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
  const windows = await tenant(userId).queryAll<Record<string, unknown>>(keys.loopSignaturePrefix(agentId));
  await Promise.all([keys.loopSpend(userId, agentId), ...windows.map((w) => ({ pk: w.pk, sk: w.sk }))].map((key) => tenant(userId).delete(key)));
  return true;
}

/** Stores the agent's thresholds (validated by the contract); false when the agent is gone. */
export async function putLoopBreakerSettings(userId: string, agentId: string, settings: Record<string, number>): Promise<boolean> {
  try {
    await tenant(userId).update(
      keys.agent(userId, agentId),
      { expression: 'SET loopBreaker = :s', values: { ':s': settings } },
      { expression: 'attribute_exists(pk)' },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}
