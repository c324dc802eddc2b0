import { createHash } from 'node:crypto';
import { type BreakerRecord, claimBreakerProbe, closeBreaker, countBreakerFailure, openBreaker, readBreaker, reopenBreaker } from '#data/model-breakers';
import { modelConfig } from '#platform/config';

/**
 * The circuit breaker of a provider's model, shared through data/model-breakers.ts. Closed: calls
 * go to the model and retryable failures are counted; MODEL_BREAKER_FAILURES of them within
 * MODEL_BREAKER_WINDOW_SECONDS open it. Open: calls skip the model for the cool-down. Half-open:
 * one caller at a time (a conditional claim) probes it; success closes it, failure opens it again.
 */

export type BreakerPhase = 'closed' | 'open' | 'half-open';
/** What a call does with a model: call it, probe it (the one call of a half-open breaker), or skip it. */
export type Admission = 'call' | 'probe' | 'skip';

export interface BreakerSettings {
  failures: number;
  windowMs: number;
  coolDownMs: number;
}

export const breakerSettings = (): BreakerSettings => {
  const b = modelConfig().breaker;
  return { failures: b.failures, windowMs: b.windowSeconds * 1000, coolDownMs: b.coolDownSeconds * 1000 };
};

export function phaseOf(state: BreakerRecord | undefined, nowMs: number, s: BreakerSettings): BreakerPhase {
  if (state?.openedAtMs === undefined) return 'closed';
  return nowMs < state.openedAtMs + s.coolDownMs ? 'open' : 'half-open';
}

/** The admission a breaker in this state gives without a write: a half-open one still needs its probe claimed. */
export function admissionOf(state: BreakerRecord | undefined, nowMs: number, s: BreakerSettings): Admission {
  const phase = phaseOf(state, nowMs, s);
  if (phase === 'closed') return 'call';
  if (phase === 'open') return 'skip';
  return state?.probeUntilMs !== undefined && state.probeUntilMs >= nowMs ? 'skip' : 'probe';
}

/** Whether the failure that left the breaker in this state opens it. */
export const opensAfter = (state: BreakerRecord, s: BreakerSettings) => state.openedAtMs === undefined && state.failures >= s.failures;

/** A provider's model: the connection by name and address (and the user's own key), and the model. */
export function breakerIdOf(connection: { name: string; baseUrl: string; byok: boolean }, modelId: string, userId?: string): string {
  const endpoint = createHash('sha256')
    .update(`${connection.baseUrl}${connection.byok ? `#${userId ?? ''}` : ''}`)
    .digest('hex')
    .slice(0, 12);
  return `${connection.name}@${endpoint}#${modelId}`;
}

export interface BreakerTicket {
  id: string;
  admission: Admission;
  /** The record read at admission: a recent failure tells the caller to check for a failover to end. */
  lastFailureAtMs?: number;
}

export async function admit(id: string, nowMs = Date.now()): Promise<BreakerTicket> {
  const s = breakerSettings();
  const state = await readBreaker(id);
  let admission = admissionOf(state, nowMs, s);
  if (admission === 'probe' && !(await claimBreakerProbe(id, s.coolDownMs, modelConfig().timeoutMs, nowMs))) admission = 'skip';
  return { id, admission, lastFailureAtMs: state?.lastFailureAtMs };
}

/** A retryable failure of the model: counted, and the breaker opened at the threshold (or re-opened after a failed probe). */
export async function recordFailure(ticket: BreakerTicket, nowMs = Date.now()): Promise<void> {
  const s = breakerSettings();
  if (ticket.admission === 'probe') return reopenBreaker(ticket.id, nowMs);
  const after = await countBreakerFailure(ticket.id, s.windowMs, nowMs);
  if (opensAfter(after, s)) await openBreaker(ticket.id, nowMs);
}

/** The model answered: only a probe writes (it closes the breaker). */
export async function recordSuccess(ticket: BreakerTicket, nowMs = Date.now()): Promise<void> {
  if (ticket.admission === 'probe') await closeBreaker(ticket.id, nowMs);
}
