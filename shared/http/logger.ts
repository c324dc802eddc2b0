/** The structured logger lives beside the config (shared/logger.ts); the pipeline's modules import it from here. */
export { logger, resetLogger } from '../logger';
