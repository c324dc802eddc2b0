import * as z from 'zod';
import type { SkillActionBodies } from './index';

/** At most 50 statements per import, so one import (statements plus the months it touches) fits one database transaction. */
export const STATEMENT_IMPORT_MAX = 50;
/** A signed decimal with at most six fractional digits, e.g. `12.5`, `-0.003125`. */
export const DECIMAL_PATTERN = /^-?\d{1,12}(\.\d{1,6})?$/;

const Statement = z.strictObject({
  reference: z.string().trim().min(1).max(128).optional().describe("the distributor's id of the statement line; a reference imports once"),
  period: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month, YYYY-MM'),
  source: z.string().trim().min(1).max(100).describe('platform or distributor'),
  release: z.string().trim().min(1).max(200).optional(),
  amount: z.string().regex(DECIMAL_PATTERN, 'a decimal amount such as 12.345678').describe('USD, exact decimal string, negative for adjustments'),
  currency: z.literal('USD').default('USD'),
});

export const royaltyTrackerBodies = {
  total: z.strictObject({ action: z.literal('total') }).describe('exact totals of the stored statements, by month, source and release'),
  import_statements: z.strictObject({ action: z.literal('import_statements'), statements: z.array(Statement).min(1).max(STATEMENT_IMPORT_MAX) }),
};

export const royaltyTrackerActions: SkillActionBodies = { bodies: royaltyTrackerBodies, example: { action: 'total' } };
