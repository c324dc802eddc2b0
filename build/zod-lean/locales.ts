export { default as en } from '../../node_modules/zod/v4/locales/en.js';
