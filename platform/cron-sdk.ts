/** croner, imported by platform/cron.ts where a schedule is parsed or advanced, not at init (issue 16). */
export { Cron } from 'croner';
