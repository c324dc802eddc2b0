import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The deadline of the request being served (issue 20): set once by the pipeline around the whole
 * request, read by every outside call below it (model provider, chain RPC, card processor, email),
 * so each ends before the function does and answers with its own code instead of being cut off.
 * Kept in async context rather than passed down, because the calls sit several layers under the
 * handler; the local server runs requests side by side, and each sees only its own deadline.
 */
interface Deadline {
  at: number;
  signal: AbortSignal;
}

const deadlines = new AsyncLocalStorage<Deadline>();

/** Time an outside call leaves before the deadline, so its failure still becomes an answer with its code. */
export const OUTSIDE_CALL_MARGIN_MS = 1000;

/** Runs `work` under a deadline `budgetMs` from now; `signal()` aborts when it passes. */
export function withDeadline<T>(budgetMs: number, work: () => Promise<T>): Promise<T> {
  const ms = Math.max(0, budgetMs);
  return deadlines.run({ at: Date.now() + ms, signal: AbortSignal.timeout(ms) }, work);
}

/** The current request's deadline signal; undefined outside a request (workers, scripts). */
export const deadlineSignal = (): AbortSignal | undefined => deadlines.getStore()?.signal;

/**
 * How long an outside call may take: its own cap, but never past the request's deadline less
 * the margin. At least 1 ms, so a call made too late fails at once (and answers with its code).
 */
export function outsideCallBudgetMs(capMs: number): number {
  const deadline = deadlines.getStore();
  if (!deadline) return capMs;
  return Math.max(1, Math.min(capMs, deadline.at - Date.now() - OUTSIDE_CALL_MARGIN_MS));
}

/** An AbortSignal for one outside call bounded by `outsideCallBudgetMs(capMs)`. */
export const outsideCallSignal = (capMs: number): AbortSignal => AbortSignal.timeout(outsideCallBudgetMs(capMs));
