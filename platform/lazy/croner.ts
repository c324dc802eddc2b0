/** croner, imported by platform/cron.ts where a schedule is parsed or advanced, not at init. */
export { Cron } from 'croner';
