import * as z from 'zod';

/** Request bodies of the event skills built so far: event-ticketing. */

const Text = z.string().trim().min(1).max(200);
const Id = z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, _ or -');
const TierName = z.string().min(1).max(40).regex(/^[a-z0-9-]+$/, 'must be lowercase letters, digits or -');

export const MAX_TICKETS_PER_ORDER = 10;

export const eventTicketingActions = {
  create_event: z.strictObject({
    action: z.literal('create_event'),
    name: Text,
    date: z.iso.date(),
    venue: Text.optional(),
    currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD').default('USD'),
    tiers: z
      .array(z.strictObject({ tier: TierName, priceCents: z.number().int().nonnegative().max(100_000_000), quantity: z.number().int().positive().max(1_000_000) }))
      .min(1)
      .max(20)
      .refine((tiers) => new Set(tiers.map((t) => t.tier)).size === tiers.length, 'tier names must be unique'),
  }),
  list_events: z.strictObject({ action: z.literal('list_events') }),
  purchase: z.strictObject({
    action: z.literal('purchase'),
    eventId: Id,
    email: z.email().max(254),
    tier: TierName,
    quantity: z.number().int().positive().max(MAX_TICKETS_PER_ORDER).default(1),
  }),
  list_orders: z.strictObject({ action: z.literal('list_orders'), eventId: Id.optional() }),
};
