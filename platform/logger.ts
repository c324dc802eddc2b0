import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { config } from './config';

let instance: Logger | undefined;

/**
 * A server that handles several requests at once in one process (the local stack) gives each its
 * own child logger here, so the keys one request appends (its requestId, route) never show up on
 * another's lines. A Lambda container serves one request at a time and logs through the base.
 */
const requestLoggers = new AsyncLocalStorage<Logger>();

function baseLogger(): Logger {
  instance ??= new Logger({ serviceName: 'agent-platform', logLevel: config().logLevel });
  return instance;
}

/** One structured (JSON) logger per container (or per request inside `withRequestLogger`). */
export function logger(): Logger {
  return requestLoggers.getStore() ?? baseLogger();
}

/**
 * Child loggers of finished requests, handed to the next ones: Powertools builds a child from its
 * settings and the environment again, many times the cost of reusing one (the warm figures are
 * in bench/results.json). A request's keys (the pipeline's requestId and route)
 * are replaced by the next request's own when it starts.
 */
const idleRequestLoggers: Logger[] = [];
const IDLE_REQUEST_LOGGERS_MAX = 256;

/** Runs `work` with a logger of its own: what it appends stays on its own lines. */
export async function withRequestLogger<T>(work: () => Promise<T>): Promise<T> {
  const child = idleRequestLoggers.pop() ?? baseLogger().createChild();
  try {
    return await requestLoggers.run(child, work);
  } finally {
    if (idleRequestLoggers.length < IDLE_REQUEST_LOGGERS_MAX) idleRequestLoggers.push(child);
  }
}

/** Tests that change LOG_LEVEL through reloadConfig get a logger built with the new level. */
export function resetLogger(): void {
  instance = undefined;
  idleRequestLoggers.length = 0;
}
