/** The structured logger lives beside the config (platform/logger.ts); the pipeline's modules import it from here. */
export { logger, resetLogger } from '#platform/logger';
