export * from '../../node_modules/zod/v4/core/index.js';
export * as locales from './locales';
