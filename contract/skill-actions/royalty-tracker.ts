import * as z from 'zod/mini';
import type { SkillActionBodies } from './index';
import { lazySchema } from '../route';

/** At most 50 statements per import, so one import (statements plus the months it touches) fits one database transaction. */
export const STATEMENT_IMPORT_MAX = 50;
/** A signed decimal with at most six fractional digits, e.g. `12.5`, `-0.003125`. */
export const DECIMAL_PATTERN = /^-?\d{1,12}(\.\d{1,6})?$/;

const Statement = lazySchema(() =>
  z.strictObject({
    reference: z
      .optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(128)))
      .check(z.describe("the distributor's id of the statement line; a reference imports once")),
    period: z.string().check(z.regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month, YYYY-MM')),
    source: z.string().check(z.trim(), z.minLength(1), z.maxLength(100), z.describe('platform or distributor')),
    release: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200))),
    amount: z.string().check(z.regex(DECIMAL_PATTERN, 'a decimal amount such as 12.345678'), z.describe('USD, exact decimal string, negative for adjustments')),
    currency: z._default(z.literal('USD'), 'USD'),
  }),
);

export const royaltyTrackerBodies = lazySchema(() => ({
  total: z.strictObject({ action: z.literal('total') }).check(z.describe('exact totals of the stored statements, by month, source and release')),
  import_statements: z.strictObject({
    action: z.literal('import_statements'),
    statements: z.array(Statement()).check(z.minLength(1), z.maxLength(STATEMENT_IMPORT_MAX)),
  }),
}));

export const royaltyTrackerActions: SkillActionBodies = { bodies: royaltyTrackerBodies, example: { action: 'total' } };
