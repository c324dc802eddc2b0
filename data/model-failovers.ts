import * as keys from './keys';
import { ConditionFailedError, tenant } from './tenant';

/**
 * Which of an account's models are being answered by a fallback: one item per agent (or none) and
 * primary model, `USER#<id> / MODELFAILOVER#<agentId|->#<modelId>`, written by the first call that
 * fails over and removed by the first call the primary answers again. Each write is the state
 * change that a `model.failover` or `model.restored` event reports, so the conditions make each
 * event happen once per episode, whatever the concurrency.
 */

export interface ModelFailoverRecord {
  /** The primary model. */
  model: string;
  /** The model that answered instead. */
  fallback: string;
  /** Why the primary did not answer (`rate-limited`, `server-error`, `connection`, `first-token-timeout`, `response-timeout`, `breaker-open`). */
  cause: string;
  agentId?: string;
  since: string;
}

/** Forgotten after a week: a restore that never came (the agent was deleted, the model changed) leaves nothing behind. */
const KEEP_SECONDS = 7 * 24 * 3600;

/** Records that the primary's calls go to a fallback; false when that was already recorded. */
export async function markFailover(userId: string, record: Omit<ModelFailoverRecord, 'since'>, now = new Date()): Promise<boolean> {
  try {
    await tenant(userId).put(
      {
        ...keys.modelFailover(userId, record.agentId, record.model),
        ...record,
        since: now.toISOString(),
        expiresAt: Math.floor(now.getTime() / 1000) + KEEP_SECONDS,
      },
      { expression: 'attribute_not_exists(pk)' },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** The account's record for a primary model, if its calls are on a fallback. */
export async function getFailover(userId: string, agentId: string | undefined, model: string): Promise<ModelFailoverRecord | undefined> {
  const item = await tenant(userId).get<ModelFailoverRecord & Record<string, unknown>>(keys.modelFailover(userId, agentId, model));
  return item && plain(item);
}

/** Ends the episode: the record removed, for the one caller that removed it. */
export async function clearFailover(userId: string, agentId: string | undefined, model: string): Promise<ModelFailoverRecord | undefined> {
  try {
    const old = await tenant(userId).delete<ModelFailoverRecord & Record<string, unknown>>(keys.modelFailover(userId, agentId, model), {
      expression: 'attribute_exists(pk)',
    });
    return old && plain(old);
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}

/** Every model of the account on a fallback now (the console's agent page shows them). */
export async function listFailovers(userId: string): Promise<ModelFailoverRecord[]> {
  const items = await tenant(userId).queryAll<ModelFailoverRecord & Record<string, unknown>>(keys.modelFailoverPrefix);
  return items.map(plain);
}

function plain({ model, fallback, cause, agentId, since }: ModelFailoverRecord): ModelFailoverRecord {
  return { model, fallback, cause, since, ...(agentId ? { agentId } : {}) };
}
