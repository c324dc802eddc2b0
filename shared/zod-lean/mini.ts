import { config } from '../../node_modules/zod/v4/core/index.js';
import en from '../../node_modules/zod/v4/locales/en.js';

/**
 * zod/mini for the bundles (lib/bundling.ts): the mini API with `locales` holding `en` alone, like
 * ./api.ts, and `en` installed as classic zod installs it on import. zod/mini installs no locale, so a
 * bundle without classic zod would answer every issue with a bare "Invalid input" where tests (which
 * load classic) see "Too small: expected number to be >0".
 */
config(en());

export * from '../../node_modules/zod/v4/mini/external.js';
export * as locales from './locales';
