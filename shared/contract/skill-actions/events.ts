import * as z from 'zod';

/** Request bodies of the event skills built so far: event-ticketing, guestlist, event-scheduler, venue-finder, festival-finder. */

const Text = z.string().trim().min(1).max(200);
const Id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, _ or -');
const TierName = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[a-z0-9-]+$/, 'must be lowercase letters, digits or -');

export const MAX_TICKETS_PER_ORDER = 10;

export const eventTicketingActions = {
  create_event: z.strictObject({
    action: z.literal('create_event'),
    name: Text,
    date: z.iso.date(),
    venue: Text.optional(),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD')
      .default('USD'),
    tiers: z
      .array(
        z.strictObject({ tier: TierName, priceCents: z.number().int().nonnegative().max(100_000_000), quantity: z.number().int().positive().max(1_000_000) }),
      )
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

export const guestlistActions = {
  create_list: z.strictObject({ action: z.literal('create_list'), eventId: Id, name: Text.optional(), capacity: z.number().int().positive().max(1_000_000) }),
  add_guest: z.strictObject({
    action: z.literal('add_guest'),
    eventId: Id,
    name: Text,
    email: z.email().max(254).optional(),
    plusOnes: z.number().int().min(0).max(10).default(0).describe('guests they bring; each takes a spot'),
  }),
  remove_guest: z.strictObject({ action: z.literal('remove_guest'), eventId: Id, guestId: Id }),
  check_in: z.strictObject({ action: z.literal('check_in'), eventId: Id, guestId: Id }),
  list_guests: z.strictObject({ action: z.literal('list_guests'), eventId: Id }),
};

export const eventSchedulerActions = {
  schedule: z.strictObject({
    action: z.literal('schedule'),
    title: Text,
    date: z.iso.date(),
    time: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM (UTC)'),
    channels: z
      .array(z.enum(['chatBot', 'communityBot', 'businessMessaging', 'teamChat']))
      .min(1)
      .max(4),
    message: z.string().trim().min(1).max(4000).optional(),
  }),
  list: z.strictObject({ action: z.literal('list'), status: z.enum(['scheduled', 'cancelled', 'delivering', 'delivered', 'failed']).optional() }),
  cancel: z.strictObject({ action: z.literal('cancel'), postId: Id }),
};

const Money = z.number().nonnegative().max(100_000_000);

/** One venue of the operator's import file (`POST /api/skills/venue-finder/catalogue`). Prices in USD. */
export const VenueEntry = z.strictObject({
  id: Id,
  name: Text,
  city: Text,
  country: z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166 alpha-2 code such as GB'),
  type: Text.describe('club, bar, theatre, arena, outdoor…'),
  capacity: z.number().int().positive(),
  price: Money.describe('hire price for one night'),
});

/** One festival of the operator's import file (`POST /api/skills/festival-finder/catalogue`). Prices in USD. */
export const FestivalEntry = z.strictObject({
  id: Id,
  name: Text,
  country: z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166 alpha-2 code such as NL'),
  city: Text.optional(),
  genres: z.array(Text).min(1).max(20),
  startDate: z.iso.date(),
  endDate: z.iso.date().optional(),
  ticketPrice: Money.describe('cheapest full ticket'),
});

export const venueFinderActions = {
  search: z.strictObject({
    action: z.literal('search'),
    city: Text.optional(),
    type: Text.optional(),
    capacity: z.number().int().positive().optional().describe('at least this many people'),
    maxPrice: Money.optional(),
  }),
};

export const festivalFinderActions = {
  search: z.strictObject({
    action: z.literal('search'),
    genre: Text.optional(),
    country: Text.optional().describe('ISO 3166 alpha-2 code'),
    maxPrice: Money.optional(),
  }),
};
