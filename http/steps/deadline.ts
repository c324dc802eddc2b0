import type { Context } from 'aws-lambda';
import { config } from '#platform/config';
import { raceDeadline, withDeadline } from '#platform/deadline';
import { HttpError } from '../errors';

/** Time left to log and send the answer after the deadline, before the function itself is stopped. */
const ANSWER_MARGIN_MS = 1000;

/** The request's budget: REQUEST_DEADLINE_MS, never past the function's own remaining time less the margin. */
function requestBudgetMs(context: Partial<Context> | undefined): number {
  const functionLeft = context?.getRemainingTimeInMillis?.();
  const configured = config().requestDeadlineMs;
  return functionLeft === undefined ? configured : Math.min(configured, functionLeft - ANSWER_MARGIN_MS);
}

/** Runs the whole request under its deadline, so authentication and the rate-limit write run inside it too. */
export const underRequestDeadline = <T>(context: Context, work: () => Promise<T>): Promise<T> => withDeadline(requestBudgetMs(context), work);

const deadlineExceeded = () => new HttpError(504, 'the request did not finish in time; retry it', 'DEADLINE_EXCEEDED');

/**
 * `work`, or 504 DEADLINE_EXCEEDED when the request's deadline passes first. The work itself goes on
 * (a DynamoDB call is bounded by its own budget); a write under an Idempotency-Key still stores its
 * answer, so the client's retry with the same key learns what happened.
 */
export const beforeDeadline = <T>(work: Promise<T>): Promise<T> => raceDeadline(work, deadlineExceeded);
