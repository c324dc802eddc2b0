import { clearFailover, getFailover, markFailover } from '#data/model-failovers';
import { recordLifecycleEvent } from '#data/lifecycle-events';
import { logger } from '#platform/logger';

/**
 * `model.failover` and `model.restored` for the account whose call moved: the first call of an
 * agent's (or the account's) model answered by a fallback records it (data/model-failovers.ts) and
 * emits `model.failover` with the cause; the first call the model answers again ends it with
 * `model.restored`. A container remembers what it saw, so a call writes nothing in the steady
 * state; a primary's answer reads the record only while its breaker saw a failure within a week.
 */

type Caller = { kind: 'account'; account: { userId: string }; agentId?: string } | { kind: 'prepaid' };

const WEEK_MS = 7 * 24 * 3600_000;
/** Per container: `fallback` while the scope is known to be on one, else the breaker failure last checked. */
const seen = new Map<string, 'fallback' | number>();
const SEEN_MAX = 10_000;

const remember = (key: string, value: 'fallback' | number) => {
  if (seen.size >= SEEN_MAX) seen.clear();
  seen.set(key, value);
};

export async function noteServedBy(caller: Caller, primary: string, used: string, cause: string | undefined, lastFailureAtMs: number | undefined) {
  if (caller.kind !== 'account') return;
  const { userId } = caller.account;
  const agentId = caller.agentId;
  const key = `${userId}#${agentId ?? '-'}#${primary}`;
  try {
    if (used !== primary) {
      if (seen.get(key) === 'fallback') return;
      remember(key, 'fallback');
      const reason = cause ?? 'server-error';
      if (await markFailover(userId, { model: primary, fallback: used, cause: reason, ...(agentId ? { agentId } : {}) })) {
        await recordLifecycleEvent(userId, {
          type: 'model.failover',
          cause: 'model-provider',
          agentId,
          reason,
          details: { model: primary, fallback: used, cause: reason },
        });
      }
      return;
    }
    const known = seen.get(key);
    const recentFailure = lastFailureAtMs !== undefined && lastFailureAtMs > Date.now() - WEEK_MS;
    if (known !== 'fallback' && (!recentFailure || known === lastFailureAtMs)) return;
    remember(key, lastFailureAtMs ?? 0);
    if (known !== 'fallback' && !(await getFailover(userId, agentId, primary))) return;
    const ended = await clearFailover(userId, agentId, primary);
    if (ended) {
      await recordLifecycleEvent(userId, {
        type: 'model.restored',
        cause: 'model-provider',
        agentId,
        details: { model: primary, fallback: ended.fallback, cause: ended.cause, since: ended.since },
      });
    }
  } catch (err) {
    // The answer stands whatever happens to its event.
    logger().warn('could not record a model failover', { error: (err as Error).message });
  }
}
