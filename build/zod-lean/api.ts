export * from '../../node_modules/zod/v4/classic/external.js';
export * as core from './core';
export * as locales from './locales';
