import * as z from 'zod';
import type { SkillActionBodies } from './index';

export const FAN_IMPORT_MAX = 200;

const Count = z.number().int().nonnegative().max(1_000_000_000);
export const FanFields = z.strictObject({
  name: z.string().trim().min(1).max(200),
  email: z.email().max(254).optional(),
  handle: z.string().trim().min(1).max(100).optional(),
  firstSeenAt: z.iso.datetime({ offset: true }).optional().describe('when the fan first engaged; default now'),
  lastActiveAt: z.iso.datetime({ offset: true }).optional(),
  purchases: Count.default(0),
  spend: z
    .string()
    .regex(/^\d{1,9}(\.\d{1,2})?$/, 'a USD amount such as 12.50')
    .default('0')
    .describe('total spend in USD'),
  streams: Count.default(0),
});

export const groupieManagerBodies = {
  segment: z.strictObject({ action: z.literal('segment') }).describe('segment every stored fan into superfans, casual and new (rules in the answer)'),
  add_fan: FanFields.extend({ action: z.literal('add_fan') }).describe('add a fan, or update the fan with the same email (else handle)'),
  import_fans: z.strictObject({ action: z.literal('import_fans'), fans: z.array(FanFields).min(1).max(FAN_IMPORT_MAX) }),
  list_fans: z.strictObject({ action: z.literal('list_fans'), segment: z.enum(['superfan', 'casual', 'new']).optional() }),
};

export const groupieManagerActions: SkillActionBodies = { bodies: groupieManagerBodies, example: { action: 'segment' } };
