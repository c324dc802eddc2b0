import type { Node } from 'constructs';

/**
 * Guard rails on Lambda concurrency, from CDK context (cdk.json holds the defaults):
 * - functionConcurrency: reserved concurrency of every HTTP function and worker; 0 or off: none.
 * - streamingConcurrency: reserved concurrency of each response-streaming twin, which is also the
 *   throttle of its Function URL; 0 or off: no reservation, and then no Function URL either.
 * - functionConcurrency.<name>: one function's own value (a contract group, a worker, or `<group>-streaming`).
 * - queueConcurrency: maxConcurrency of every SQS event source, within SQS's bounds; 0 or off: Lambda's own scaling.
 * - lambdaConcurrencyLimit: the account's concurrent executions quota in the region (Service Quotas).
 * Reserved concurrency is both a floor and a ceiling: a burst on one function can neither starve the
 * others nor be starved by them. docs/architecture.md (guard rails) gives the reasons for the defaults.
 */
export const CONCURRENCY_DEFAULTS = { functionConcurrency: 10, streamingConcurrency: 5, queueConcurrency: 5, lambdaConcurrencyLimit: 1000 } as const;

/** Lambda refuses a reservation that leaves less than this of the account's concurrency unreserved. */
export const UNRESERVED_MINIMUM = 100;

/** The bounds of an SQS event source's maxConcurrency. */
const QUEUE_CONCURRENCY = { min: 2, max: 1000 } as const;

export interface ConcurrencyFunction {
  /** As monitoring names it: a contract group, a worker, or `<group>-streaming`. */
  name: string;
  streaming: boolean;
}

export interface Concurrency {
  /** Reserved concurrency by function name; a function absent from it has none. */
  reserved: ReadonlyMap<string, number>;
  /** maxConcurrency of every SQS event source; undefined: none set. */
  queue?: number;
}

const OFF = new Set(['0', 'off', 'false', 'none']);

/** A count from context: `-c key=value` gives strings, cdk.json numbers; undefined when turned off. */
function countOf(key: string, value: unknown, fallback: number | undefined): number | undefined {
  if (value === undefined || value === null || value === '') return fallback;
  const text = String(value).trim().toLowerCase();
  if (OFF.has(text)) return undefined;
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1) throw new Error(`CDK context "${key}" must be a whole number of executions, or 0/off: ${String(value)}`);
  return count;
}

/**
 * The reservations and the event-source ceiling, refused at synth when the deploy would fail (the
 * account's unreserved minimum) or lose messages (a queue consumer throttled below its event
 * source's ceiling returns each throttled batch to the queue, counting a receive towards the DLQ).
 */
export function readConcurrency(node: Node, functions: readonly ConcurrencyFunction[], queueConsumers: readonly string[]): Concurrency {
  const context = node.getAllContext() as Record<string, unknown>;
  const plain = countOf('functionConcurrency', context.functionConcurrency, CONCURRENCY_DEFAULTS.functionConcurrency);
  const streaming = countOf('streamingConcurrency', context.streamingConcurrency, CONCURRENCY_DEFAULTS.streamingConcurrency);
  const limit = countOf('lambdaConcurrencyLimit', context.lambdaConcurrencyLimit, CONCURRENCY_DEFAULTS.lambdaConcurrencyLimit);
  if (limit === undefined) throw new Error('CDK context "lambdaConcurrencyLimit" is the account quota and cannot be off');
  const queue = countOf('queueConcurrency', context.queueConcurrency, CONCURRENCY_DEFAULTS.queueConcurrency);
  if (queue !== undefined && (queue < QUEUE_CONCURRENCY.min || queue > QUEUE_CONCURRENCY.max))
    throw new Error(`CDK context "queueConcurrency" must be ${QUEUE_CONCURRENCY.min} to ${QUEUE_CONCURRENCY.max}, or off: ${queue}`);

  const names = new Set(functions.map((f) => f.name));
  const overrides = new Map<string, number | undefined>();
  for (const [key, value] of Object.entries(context)) {
    if (!key.startsWith('functionConcurrency.')) continue;
    const name = key.slice('functionConcurrency.'.length);
    if (!names.has(name)) throw new Error(`CDK context "${key}" names no function; known: ${[...names].join(', ')}`);
    overrides.set(name, countOf(key, value, undefined));
  }

  const reserved = new Map<string, number>();
  for (const fn of functions) {
    const byKind = fn.streaming ? streaming : plain;
    const count = overrides.has(fn.name) ? overrides.get(fn.name) : byKind;
    if (count !== undefined) reserved.set(fn.name, count);
  }
  const total = [...reserved.values()].reduce((sum, n) => sum + n, 0);
  if (total > 0 && total > limit - UNRESERVED_MINIMUM)
    throw new Error(
      [
        `the functions reserve ${total} of the account's ${limit} concurrent executions, and Lambda keeps ${UNRESERVED_MINIMUM} unreserved:`,
        'lower functionConcurrency / streamingConcurrency, set lambdaConcurrencyLimit to the account quota,',
        'or turn reservations off (-c functionConcurrency=off -c streamingConcurrency=off)',
      ].join(' '),
    );
  if (queue !== undefined)
    for (const consumer of queueConsumers) {
      const own = reserved.get(consumer);
      if (own !== undefined && own < queue)
        throw new Error(
          `${consumer} reserves ${own} concurrent executions, below queueConcurrency ${queue}: its throttled batches would count receives towards the DLQ`,
        );
    }
  return { reserved, queue };
}
