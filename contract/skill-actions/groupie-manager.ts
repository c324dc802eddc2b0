import * as z from 'zod/mini';
import type { SkillActionBodies } from './index';
import { lazySchema } from '../route';

export const FAN_IMPORT_MAX = 200;

const Count = lazySchema(() => z.number().check(z.int(), z.nonnegative(), z.maximum(1_000_000_000)));
export const FanFields = lazySchema(() =>
  z.strictObject({
    name: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
    email: z.optional(z.email().check(z.maxLength(254))),
    handle: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(100))),
    firstSeenAt: z.optional(z.iso.datetime({ offset: true })).check(z.describe('when the fan first engaged; default now')),
    lastActiveAt: z.optional(z.iso.datetime({ offset: true })),
    purchases: z._default(Count(), 0),
    spend: z._default(z.string().check(z.regex(/^\d{1,9}(\.\d{1,2})?$/, 'a USD amount such as 12.50')), '0').check(z.describe('total spend in USD')),
    streams: z._default(Count(), 0),
  }),
);

export const groupieManagerBodies = lazySchema(() => ({
  segment: z.strictObject({ action: z.literal('segment') }).check(z.describe('segment every stored fan into superfans, casual and new (rules in the answer)')),
  add_fan: z.extend(FanFields(), { action: z.literal('add_fan') }).check(z.describe('add a fan, or update the fan with the same email (else handle)')),
  import_fans: z.strictObject({ action: z.literal('import_fans'), fans: z.array(FanFields()).check(z.minLength(1), z.maxLength(FAN_IMPORT_MAX)) }),
  list_fans: z.strictObject({ action: z.literal('list_fans'), segment: z.optional(z.enum(['superfan', 'casual', 'new'])) }),
}));

export const groupieManagerActions: SkillActionBodies = { bodies: groupieManagerBodies, example: { action: 'segment' } };
