import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The deadline of the request being served: set once by the pipeline around the whole
 * request, read by every outside call below it (model provider, chain RPC, card processor, email),
 * so each ends before the function does and answers with its own code instead of being cut off.
 * Kept in async context rather than passed down, because the calls sit several layers under the
 * handler; the local server runs requests side by side, and each sees only its own deadline.
 */
interface Deadline {
  at: number;
  /** Made on first use only: each AbortSignal.timeout is kept alive, with what it holds, until its timer fires. */
  signal?: AbortSignal;
}

const deadlines = new AsyncLocalStorage<Deadline>();

/** Time an outside call leaves before the deadline, so its failure still becomes an answer with its code. */
export const OUTSIDE_CALL_MARGIN_MS = 1000;

/** Runs `work` under a deadline `budgetMs` from now; `signal()` aborts when it passes. */
export function withDeadline<T>(budgetMs: number, work: () => Promise<T>): Promise<T> {
  return deadlines.run({ at: Date.now() + Math.max(0, budgetMs) }, work);
}

/** The current request's deadline signal; undefined outside a request (workers, scripts). */
export function deadlineSignal(): AbortSignal | undefined {
  const deadline = deadlines.getStore();
  if (!deadline) return undefined;
  deadline.signal ??= AbortSignal.timeout(Math.max(0, deadline.at - Date.now()));
  return deadline.signal;
}

/**
 * `work`, or the rejection `expired()` makes once the current deadline passes first. A
 * plain timer cleared as soon as the work settles, so a request that answers in time leaves nothing
 * behind (a signal per request stayed alive for the whole budget, filled the old generation and
 * brought on the collections that made the warm p99). The work itself goes on after an expiry.
 */
export function raceDeadline<T>(work: Promise<T>, expired: () => Error): Promise<T> {
  const deadline = deadlines.getStore();
  if (!deadline) return work;
  const left = deadline.at - Date.now();
  if (left <= 0) return Promise.reject(expired());
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(expired()), left);
  });
  return Promise.race([work, expiry]).finally(() => clearTimeout(timer));
}

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
