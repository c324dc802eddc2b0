/** zod/mini for the bundles (build/substitutes.ts): the mini API with `locales` holding `en` alone, like ./api.ts. */
export * from '../../node_modules/zod/v4/mini/external.js';
export * as core from './core';
export * as locales from './locales';
