import { Logger } from '@aws-lambda-powertools/logger';
import { config } from './config';

let instance: Logger | undefined;

/** One structured (JSON) logger per container; request keys are appended per request. */
export function logger(): Logger {
  instance ??= new Logger({ serviceName: 'agent-platform', logLevel: config().logLevel });
  return instance;
}

/** Tests that change LOG_LEVEL through reloadConfig get a logger built with the new level. */
export function resetLogger(): void {
  instance = undefined;
}
