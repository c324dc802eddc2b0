import * as z from 'zod/mini';
import { lazySchema } from '../route';

/** Request bodies of the event skills built so far: event-ticketing, guestlist, event-scheduler, venue-finder, festival-finder. */

const Text = lazySchema(() => z.string().check(z.trim(), z.minLength(1), z.maxLength(200)));
const Id = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(64), z.regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, _ or -')));
const TierName = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(40), z.regex(/^[a-z0-9-]+$/, 'must be lowercase letters, digits or -')));

export const MAX_TICKETS_PER_ORDER = 10;

export const eventTicketingActions = lazySchema(() => ({
  create_event: z.strictObject({
    action: z.literal('create_event'),
    name: Text(),
    date: z.iso.date(),
    venue: z.optional(Text()),
    currency: z._default(z.string().check(z.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD')), 'USD'),
    tiers: z
      .array(
        z.strictObject({
          tier: TierName(),
          priceCents: z.number().check(z.int(), z.nonnegative(), z.maximum(100_000_000)),
          quantity: z.number().check(z.int(), z.positive(), z.maximum(1_000_000)),
        }),
      )
      .check(
        z.minLength(1),
        z.maxLength(20),
        z.refine((tiers) => new Set(tiers.map((t) => t.tier)).size === tiers.length, 'tier names must be unique'),
      ),
  }),
  list_events: z.strictObject({ action: z.literal('list_events') }),
  purchase: z.strictObject({
    action: z.literal('purchase'),
    eventId: Id(),
    email: z.email().check(z.maxLength(254)),
    tier: TierName(),
    quantity: z._default(z.number().check(z.int(), z.positive(), z.maximum(MAX_TICKETS_PER_ORDER)), 1),
  }),
  list_orders: z.strictObject({ action: z.literal('list_orders'), eventId: z.optional(Id()) }),
}));

export const guestlistActions = lazySchema(() => ({
  create_list: z.strictObject({
    action: z.literal('create_list'),
    eventId: Id(),
    name: z.optional(Text()),
    capacity: z.number().check(z.int(), z.positive(), z.maximum(1_000_000)),
  }),
  add_guest: z.strictObject({
    action: z.literal('add_guest'),
    eventId: Id(),
    name: Text(),
    email: z.optional(z.email().check(z.maxLength(254))),
    plusOnes: z._default(z.number().check(z.int(), z.minimum(0), z.maximum(10)), 0).check(z.describe('guests they bring; each takes a spot')),
  }),
  remove_guest: z.strictObject({ action: z.literal('remove_guest'), eventId: Id(), guestId: Id() }),
  check_in: z.strictObject({ action: z.literal('check_in'), eventId: Id(), guestId: Id() }),
  list_guests: z.strictObject({ action: z.literal('list_guests'), eventId: Id() }),
}));

export const eventSchedulerActions = lazySchema(() => ({
  schedule: z.strictObject({
    action: z.literal('schedule'),
    title: Text(),
    date: z.iso.date(),
    time: z.string().check(z.regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM (UTC)')),
    channels: z.array(z.enum(['chatBot', 'communityBot', 'businessMessaging', 'teamChat'])).check(z.minLength(1), z.maxLength(4)),
    message: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(4000))),
  }),
  list: z.strictObject({ action: z.literal('list'), status: z.optional(z.enum(['scheduled', 'cancelled', 'delivering', 'delivered', 'failed'])) }),
  cancel: z.strictObject({ action: z.literal('cancel'), postId: Id() }),
}));

const Money = lazySchema(() => z.number().check(z.nonnegative(), z.maximum(100_000_000)));

/** One venue of the operator's import file (`POST /api/skills/venue-finder/catalogue`). Prices in USD. */
export const VenueEntry = lazySchema(() =>
  z.strictObject({
    id: Id(),
    name: Text(),
    city: Text(),
    country: z.string().check(z.regex(/^[A-Z]{2}$/, 'must be an ISO 3166 alpha-2 code such as GB')),
    type: Text().check(z.describe('club, bar, theatre, arena, outdoor…')),
    capacity: z.number().check(z.int(), z.positive()),
    price: Money().check(z.describe('hire price for one night')),
  }),
);

/** One festival of the operator's import file (`POST /api/skills/festival-finder/catalogue`). Prices in USD. */
export const FestivalEntry = lazySchema(() =>
  z.strictObject({
    id: Id(),
    name: Text(),
    country: z.string().check(z.regex(/^[A-Z]{2}$/, 'must be an ISO 3166 alpha-2 code such as NL')),
    city: z.optional(Text()),
    genres: z.array(Text()).check(z.minLength(1), z.maxLength(20)),
    startDate: z.iso.date(),
    endDate: z.optional(z.iso.date()),
    ticketPrice: Money().check(z.describe('cheapest full ticket')),
  }),
);

export const venueFinderActions = lazySchema(() => ({
  search: z.strictObject({
    action: z.literal('search'),
    city: z.optional(Text()),
    type: z.optional(Text()),
    capacity: z.optional(z.number().check(z.int(), z.positive())).check(z.describe('at least this many people')),
    maxPrice: z.optional(Money()),
  }),
}));

export const festivalFinderActions = lazySchema(() => ({
  search: z.strictObject({
    action: z.literal('search'),
    genre: z.optional(Text()),
    country: z.optional(Text()).check(z.describe('ISO 3166 alpha-2 code')),
    maxPrice: z.optional(Money()),
  }),
}));
