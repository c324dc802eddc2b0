import * as z from 'zod/mini';
import { channelInboundRoutes, whatsappVerificationRoute } from './channel-inbound';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId, SuccessTrue, ValidationErrorBody } from './common';
import { SKILL_ACTION_BODIES, type SkillActionBodies } from './skill-actions';
import { FestivalEntry, VenueEntry } from './skill-actions/events';
import { defineGroup, lazySchema, type RouteDefinition } from './route';
import { EVM_ADDRESS } from './evm';

export const SKILL_CATEGORIES = [
  'streaming',
  'events',
  'payments',
  'finance',
  'productivity',
  'communication',
  'development',
  'channels',
  'music',
  'creative',
  'marketing',
] as const;

export const SkillCategory = lazySchema(() => z.enum(SKILL_CATEGORIES));
export type SkillCategory = z.infer<ReturnType<typeof SkillCategory>>;

export interface SkillCatalogueEntry {
  /** Also the skill's id and the last segment of its endpoint, `/api/skills/<name>`. */
  name: string;
  category: SkillCategory;
  description: string;
  icon: string;
  author: string;
  featured: boolean;
}

const AUTHOR = 'platform';

/**
 * The catalogue's version: raise it with every change to the table below, and the next listing
 * seeds the change into DynamoDB (install counts and ratings are kept).
 */
export const SKILL_CATALOGUE_VERSION = 1;

/** Every skill of the marketplace; its endpoint routes are generated from this table. */
export const SKILL_CATALOGUE = [
  {
    name: 'dj-streaming',
    category: 'streaming',
    description: 'Run live DJ sets: start and stop the stream, queue tracks and read listener figures.',
    icon: '🎧',
    author: AUTHOR,
    featured: true,
  },
  {
    name: 'guestlist',
    category: 'events',
    description: 'Keep guest lists for shows: add, remove and check in guests, export the list.',
    icon: '📋',
    author: AUTHOR,
    featured: false,
  },
  { name: 'event-ticketing', category: 'events', description: 'Sell tickets by tier and deliver them by email.', icon: '🎟️', author: AUTHOR, featured: true },
  {
    name: 'event-scheduler',
    category: 'events',
    description: "Schedule events and announce them on the agent's channels.",
    icon: '📅',
    author: AUTHOR,
    featured: false,
  },
  { name: 'venue-finder', category: 'events', description: 'Find venues by city, type, capacity and price.', icon: '🏟️', author: AUTHOR, featured: false },
  {
    name: 'festival-finder',
    category: 'events',
    description: 'Find festivals by genre, country and ticket price.',
    icon: '🎪',
    author: AUTHOR,
    featured: false,
  },
  {
    name: 'usdc-payments',
    category: 'payments',
    description: "Send, request and check USDC payments from the agent's wallet.",
    icon: '💵',
    author: AUTHOR,
    featured: true,
  },
  {
    name: 'booking-settlement',
    category: 'payments',
    description: 'Settle bookings through escrow: create it, release funds, simulate guarantee and backend payouts.',
    icon: '🤝',
    author: AUTHOR,
    featured: false,
  },
  {
    name: 'instant-split',
    category: 'payments',
    description: 'Split incoming revenue between collaborators by rule, instantly.',
    icon: '✂️',
    author: AUTHOR,
    featured: false,
  },
  {
    name: 'treasury',
    category: 'finance',
    description: 'Track balances, allocations and spending across wallets.',
    icon: '🏦',
    author: AUTHOR,
    featured: false,
  },
  { name: 'royalty-tracker', category: 'finance', description: 'Total royalties across releases and platforms.', icon: '💰', author: AUTHOR, featured: false },
  { name: 'calendar', category: 'productivity', description: 'Read and manage calendar events.', icon: '🗓️', author: AUTHOR, featured: false },
  {
    name: 'file-manager',
    category: 'productivity',
    description: 'Store, list and share files such as press kits and riders.',
    icon: '📁',
    author: AUTHOR,
    featured: false,
  },
  {
    name: 'workspace-suite',
    category: 'productivity',
    description: 'Work with documents, spreadsheets and shared drives in an office workspace.',
    icon: '🧰',
    author: AUTHOR,
    featured: false,
  },
  {
    name: 'notes-workspace',
    category: 'productivity',
    description: 'Create, update and search notes and pages in a notes workspace.',
    icon: '📝',
    author: AUTHOR,
    featured: false,
  },
  { name: 'email', category: 'communication', description: 'Send and read email on behalf of the agent.', icon: '✉️', author: AUTHOR, featured: false },
  {
    name: 'webhook',
    category: 'development',
    description: 'Call outside HTTPS webhooks; private and loopback addresses are refused.',
    icon: '🪝',
    author: AUTHOR,
    featured: false,
  },
  {
    name: 'browser',
    category: 'development',
    description: 'Fetch and read public web pages; private and loopback addresses are refused.',
    icon: '🌐',
    author: AUTHOR,
    featured: false,
  },
  { name: 'chat-bot', category: 'channels', description: 'Talk to fans through a chatBot bot.', icon: '🤖', author: AUTHOR, featured: false },
  { name: 'community-bot', category: 'channels', description: 'Post and answer in communityBot servers.', icon: '🛡️', author: AUTHOR, featured: false },
  {
    name: 'business-messaging',
    category: 'channels',
    description: 'Message fans and promoters on businessMessaging.',
    icon: '💬',
    author: AUTHOR,
    featured: false,
  },
  {
    name: 'business-messaging-api',
    category: 'channels',
    description: 'Send template and bulk messages through the businessMessaging business API.',
    icon: '📡',
    author: AUTHOR,
    featured: false,
  },
  { name: 'team-chat', category: 'channels', description: 'Post updates to team chat channels for the crew.', icon: '👥', author: AUTHOR, featured: false },
  { name: 'track-archaeologist', category: 'music', description: 'Dig up tracks by BPM, genre and mood.', icon: '🔍', author: AUTHOR, featured: true },
  { name: 'setlist-oracle', category: 'music', description: 'Build a setlist for a genre and a set length.', icon: '🔮', author: AUTHOR, featured: true },
  { name: 'demo-submitter', category: 'music', description: 'Submit demos to labels and curators.', icon: '📨', author: AUTHOR, featured: false },
  { name: 'visual-synthesizer', category: 'creative', description: 'Generate visuals from a prompt and a style.', icon: '🎨', author: AUTHOR, featured: true },
  { name: 'groupie-manager', category: 'marketing', description: 'Segment fans into superfans, casual and new.', icon: '📣', author: AUTHOR, featured: false },
] as const satisfies readonly SkillCatalogueEntry[];

export type SkillName = (typeof SKILL_CATALOGUE)[number]['name'];
export const SKILL_NAMES = SKILL_CATALOGUE.map((s) => s.name) as [SkillName, ...SkillName[]];
export const SkillNameSchema = lazySchema(() => z.enum(SKILL_NAMES));

/** The skill record of spec 2.13, as `GET /api/skills` lists it. */
export const SkillRecord = lazySchema(() =>
  z.object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    category: SkillCategory(),
    icon: z.string(),
    author: z.string(),
    downloads: z.number().check(z.int(), z.nonnegative()),
    rating: z.number().check(z.minimum(0), z.maximum(5)),
    featured: z.boolean(),
  }),
);

const Text = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(200)));
const Amount = lazySchema(() => z.number().check(z.nonnegative()));
const Address = lazySchema(() => z.string().check(z.regex(EVM_ADDRESS, 'must be a 0x-prefixed 20-byte hex address')));

export const BOOKING_SETTLEMENT_ACTIONS = ['list', 'get', 'create_escrow', 'release_funds', 'simulate_settlement'] as const;
/** GET is not CSRF-protected, so it may only run the actions that change nothing. */
export const BOOKING_SETTLEMENT_READ_ACTIONS = ['list', 'get', 'simulate_settlement'] as const;
export const INSTANT_SPLIT_ACTIONS = ['list_pending', 'create_split_rule', 'execute_split', 'get_balance', 'simulate'] as const;
export const INSTANT_SPLIT_READ_ACTIONS = ['list_pending', 'get_balance', 'simulate'] as const;

const SplitRecipient = lazySchema(() =>
  z.strictObject({
    recipientAddress: Address(),
    percentage: z.number().check(z.gt(0), z.maximum(100)),
    role: z.optional(Text()),
    name: z.optional(Text()),
  }),
);

/** Request bodies the spec's skill table gives field by field. */
const SPECIFIED_SKILL_BODIES = lazySchema(
  () =>
    ({
      'visual-synthesizer': z.strictObject({ prompt: z.optional(z.string().check(z.minLength(1), z.maxLength(2000))), style: z.optional(Text()) }),
      'track-archaeologist': z.strictObject({
        action: z.enum(['search']),
        bpm: z.optional(z.number().check(z.positive(), z.maximum(400))),
        genre: z.optional(Text()),
        mood: z.optional(Text()),
      }),
      'setlist-oracle': z.strictObject({
        action: z.enum(['build']),
        genre: z.optional(Text()),
        duration: z.optional(z.number().check(z.positive(), z.maximum(24 * 60), z.describe('set length in minutes'))),
      }),
      'groupie-manager': z.strictObject({ action: z.enum(['segment']) }),
      'royalty-tracker': z.strictObject({ action: z.enum(['total']) }),
      'demo-submitter': z.strictObject({ action: z.enum(['submit']), title: z.optional(Text()), artist: z.optional(Text()) }),
      'event-ticketing': z.strictObject({
        action: z.enum(['purchase']),
        eventId: z.optional(ResourceId()),
        email: z.optional(z.email()),
        tier: z.optional(Text()),
      }),
      'event-scheduler': z.strictObject({
        action: z.enum(['schedule']),
        title: z.optional(Text()),
        date: z.optional(z.iso.date()),
        time: z.optional(z.string().check(z.regex(/^\d{2}:\d{2}$/, 'must be HH:MM'))),
        channels: z.optional(z.array(Text()).check(z.maxLength(20))),
      }),
      'venue-finder': z.strictObject({
        action: z.enum(['search']),
        city: z.optional(Text()),
        type: z.optional(Text()),
        capacity: z.optional(z.number().check(z.int(), z.positive())),
        maxPrice: z.optional(Amount()),
      }),
      'festival-finder': z.strictObject({
        action: z.enum(['search']),
        genre: z.optional(Text()),
        country: z.optional(Text()),
        maxPrice: z.optional(Amount()),
      }),
      'booking-settlement': z.strictObject({
        action: z.enum(BOOKING_SETTLEMENT_ACTIONS),
        bookingId: z.optional(ResourceId()).check(z.describe('required for create_escrow and release_funds')),
        booking: z
          .optional(z.strictObject({ guarantee: Amount(), backend: Amount(), deposit: Amount() }))
          .check(z.describe('required for simulate_settlement')),
      }),
      'instant-split': z.strictObject({
        action: z.enum(INSTANT_SPLIT_ACTIONS),
        splitId: z.optional(ResourceId()).check(z.describe('required for execute_split')),
        splits: z
          .optional(z.union([SplitRecipient(), z.array(SplitRecipient()).check(z.minLength(1), z.maxLength(50))]))
          .check(z.describe('required for create_split_rule: one recipient or a list of them')),
        threshold: z.optional(Amount()).check(z.describe('for create_split_rule')),
        streams: z.optional(z.number().check(z.int(), z.nonnegative())).check(z.describe('for simulate')),
        rate: z.optional(Amount()).check(z.describe('for simulate: payout per stream')),
      }),
    }) satisfies Partial<Record<SkillName, z.ZodMiniObject>>,
);

/** The shape designed for skills whose request fields the spec leaves open. */
export const DesignedSkillBody = lazySchema(() =>
  z.strictObject({
    action: z.string().check(z.minLength(1), z.maxLength(64), z.describe('the operation the skill runs')),
    params: z.optional(z.record(z.string().check(z.maxLength(64)), z.json())).check(z.describe("the operation's arguments")),
  }),
);

type SpecifiedSkill = keyof ReturnType<typeof SPECIFIED_SKILL_BODIES>;
type DesignedSkill = Exclude<SkillName, SpecifiedSkill>;

const DESIGNED_SKILL_EXAMPLES: Record<DesignedSkill, z.infer<ReturnType<typeof DesignedSkillBody>>> = {
  'dj-streaming': { action: 'start_stream', params: { title: 'Friday night house set', genre: 'house' } },
  guestlist: { action: 'add_guest', params: { eventId: 'evt_summer-24', name: 'Ada Lovelace', email: 'ada@example.com', plusOnes: 1 } },
  'usdc-payments': { action: 'get_balance' },
  treasury: { action: 'get_balances', params: { currency: 'USDC' } },
  calendar: { action: 'list_events', params: { from: '2025-07-01', to: '2025-07-31' } },
  'file-manager': { action: 'list', params: { folder: 'press-kit' } },
  'workspace-suite': { action: 'create_document', params: { title: 'Tour budget 2025' } },
  'notes-workspace': { action: 'search', params: { query: 'tech rider' } },
  email: { action: 'send', params: { to: 'promoter@example.com', subject: 'Hold for 12 July', body: 'Can we confirm the hold?' } },
  webhook: { action: 'send', params: { url: 'https://hooks.example.com/tour', payload: { event: 'show.announced' } } },
  browser: { action: 'fetch', params: { url: 'https://example.com/news' } },
  'chat-bot': { action: 'send_message', params: { chatId: '123456789', text: 'Doors open at 8pm.' } },
  'community-bot': { action: 'post', params: { channel: 'announcements', text: 'New single out Friday.' } },
  'business-messaging': { action: 'send_message', params: { to: '+447700900123', text: 'Your tickets are confirmed.' } },
  'business-messaging-api': { action: 'send_template', params: { to: '+447700900123', template: 'show_reminder' } },
  'team-chat': { action: 'post_message', params: { channel: 'crew', text: 'Load-in at 3pm.' } },
};

const SPECIFIED_SKILL_EXAMPLES: { [K in SpecifiedSkill]: z.infer<ReturnType<typeof SPECIFIED_SKILL_BODIES>[K]> } = {
  'visual-synthesizer': { prompt: 'Neon skyline over a crowded dance floor', style: 'synthwave' },
  'track-archaeologist': { action: 'search', bpm: 124, genre: 'deep house', mood: 'uplifting' },
  'setlist-oracle': { action: 'build', genre: 'techno', duration: 90 },
  'groupie-manager': { action: 'segment' },
  'royalty-tracker': { action: 'total' },
  'demo-submitter': { action: 'submit', title: 'Midnight Drive', artist: 'Nova Lane' },
  'event-ticketing': { action: 'purchase', eventId: 'evt_summer-24', email: 'fan@example.com', tier: 'general' },
  'event-scheduler': { action: 'schedule', title: 'Album launch party', date: '2025-09-12', time: '20:30', channels: ['chatBot', 'communityBot'] },
  'venue-finder': { action: 'search', city: 'Manchester', type: 'club', capacity: 500, maxPrice: 2000 },
  'festival-finder': { action: 'search', genre: 'electronic', country: 'NL', maxPrice: 250 },
  'booking-settlement': { action: 'simulate_settlement', booking: { guarantee: 1500, backend: 70, deposit: 500 } },
  'instant-split': {
    action: 'create_split_rule',
    splits: [
      { recipientAddress: '0x1111111111111111111111111111111111111111', percentage: 60, role: 'artist', name: 'Nova Lane' },
      { recipientAddress: '0x2222222222222222222222222222222222222222', percentage: 40, role: 'producer', name: 'K. Ito' },
    ],
    threshold: 100,
  },
};

/**
 * The skills' action bodies (./skill-actions, a lot of schema code): the document and the tests read
 * them through the routes below. The functions' bundles leave the table out (build/plugins/
 * contract-without-docs.ts), so the skills function does not parse it at its cold start: it never builds
 * a skill route's body from the contract (the route's body is `validatedBy: 'handler'`; each skill's
 * module validates with the same schemas, imported from its own file of ./skill-actions).
 */
function skillActionBodies(name: SkillName): SkillActionBodies | undefined {
  return Object.hasOwn(SKILL_ACTION_BODIES, name) ? SKILL_ACTION_BODIES[name] : undefined;
}

// The examples hold exactly the specified skills (their type requires each), and asking them builds no schema.
const isSpecified = (name: SkillName): name is SpecifiedSkill => Object.hasOwn(SPECIFIED_SKILL_EXAMPLES, name);

/**
 * Body schema of a skill endpoint: its actions' bodies once its module is built, before that the
 * spec's fields where it gives them, else the designed shape.
 */
export const skillBody = (name: SkillName): z.ZodMiniType => {
  const actionBodies = skillActionBodies(name);
  const actions = actionBodies ? Object.values(actionBodies.bodies()) : [];
  if (actions.length) return z.discriminatedUnion('action', actions as [z.ZodMiniObject, ...z.ZodMiniObject[]]);
  return isSpecified(name) ? SPECIFIED_SKILL_BODIES()[name] : DesignedSkillBody();
};

const SKILL_EXAMPLES: Record<SkillName, unknown> = { ...DESIGNED_SKILL_EXAMPLES, ...SPECIFIED_SKILL_EXAMPLES };

const pascal = (name: string) => name.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());

/** The operation name of a skill's POST endpoint, `skillSetlistOracle` for `setlist-oracle`. */
export const skillOperation = (name: SkillName) => `skill${pascal(name)}`;

/** Skill answers beyond `success` are left open by the spec, so any extra data is allowed. */
export const SkillSuccessBody = lazySchema(() => z.looseObject({ success: z.literal(true) }));

const skillResponses = lazySchema(() => ({
  ...commonErrorResponses(),
  400: z.union([ValidationErrorBody(), ErrorBody()]).check(z.describe('invalid parameters (e.g. a field the chosen action needs is missing)')),
  200: SkillSuccessBody(),
  404: ErrorBody(),
  500: ErrorBody(),
}));

const skillRoutes: RouteDefinition[] = SKILL_CATALOGUE.map((skill) => {
  const designed = !isSpecified(skill.name);
  return {
    operation: skillOperation(skill.name),
    method: 'POST',
    path: `/api/skills/${skill.name}`,
    auth: 'session',
    summary: `${skill.name} skill (${skill.category}): ${skill.description}`,
    description: designed
      ? "The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`."
      : "Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.",
    body: () => skillBody(skill.name),
    // The skill's module validates the body of the chosen action (the same schema, for both
    // session and runtime callers), so skills without a module yet still answer 501.
    bodyHandling: { validatedBy: 'handler' },
    policy: { idempotent: true },
    // Skills move money and send messages on the caller's behalf: a retried call must not do it twice.
    // Read by the document and the tests only, through the whole contract.
    get example() {
      return skillActionBodies(skill.name)?.example ?? SKILL_EXAMPLES[skill.name];
    },
    responses: skillResponses,
  };
});

const Money = lazySchema(() => z.coerce.number().check(z.nonnegative()));

export const skillGetRoutes = [
  {
    operation: 'skillBookingSettlementGet',
    method: 'GET',
    path: '/api/skills/booking-settlement',
    auth: 'session',
    summary: 'Run a read-only booking-settlement action with its fields in the query.',
    description:
      'The spec lets booking-settlement answer GET as well as POST. GET runs only the actions that change nothing (`list`, `get`, `simulate_settlement`); escrow creation and release need POST. For `simulate_settlement` the booking object is given flat: `guarantee`, `backend`, `deposit`.',
    query: () =>
      z.object({
        action: z._default(z.enum(BOOKING_SETTLEMENT_READ_ACTIONS), 'list'),
        bookingId: z.optional(ResourceId()).check(z.describe('for get')),
        guarantee: z.optional(Money()),
        backend: z.optional(Money()),
        deposit: z.optional(Money()),
      }),
    responses: skillResponses,
  },
  {
    operation: 'skillInstantSplitGet',
    method: 'GET',
    path: '/api/skills/instant-split',
    auth: 'session',
    summary: 'Run a read-only instant-split action with its fields in the query.',
    description:
      'The spec lets instant-split answer GET as well as POST. GET runs only the actions that change nothing (`list_pending`, `get_balance`, `simulate`); creating and executing split rules need POST.',
    query: () =>
      z.object({
        action: z._default(z.enum(INSTANT_SPLIT_READ_ACTIONS), 'list_pending'),
        streams: z.optional(z.coerce.number().check(z.int(), z.nonnegative())).check(z.describe('for simulate')),
        rate: z.optional(Money()).check(z.describe('for simulate: payout per stream')),
      }),
    responses: skillResponses,
  },
] as const satisfies readonly RouteDefinition[];

/** An installed skill (spec 4.8 leaves its shape open). */
export const InstalledSkillRecord = lazySchema(() =>
  z.object({
    skillId: z.string(),
    agentId: z.string(),
    enabled: z.boolean(),
    config: z.record(z.string(), z.json()),
    installedAt: IsoDate(),
    updatedAt: IsoDate(),
  }),
);

const AgentSkillParams = lazySchema(() => z.strictObject({ agentId: ResourceId(), skillId: ResourceId() }));

/** A catalogue rating: whole stars. */
export const SKILL_RATING_MIN = 1;
export const SKILL_RATING_MAX = 5;

const installRoutes = [
  {
    operation: 'listInstalledSkills',
    method: 'GET',
    path: '/api/agents/{agentId}/skills',
    auth: 'session',
    summary: "The skills installed on an owned agent, with the plan's per-agent skill limit.",
    params: () => z.strictObject({ agentId: ResourceId() }),
    responses: () => ({
      200: z.object({ agentId: z.string(), skills: z.array(InstalledSkillRecord()), count: z.number().check(z.int()), limit: z.number().check(z.int()) }),
      404: ErrorBody(),
      ...commonErrorResponses(),
    }),
  },
  {
    operation: 'uninstallSkill',
    method: 'DELETE',
    path: '/api/agents/{agentId}/skills/{skillId}',
    auth: 'session',
    summary: 'Uninstall a skill from an owned agent; its unit of the skill limit is given back.',
    params: AgentSkillParams,
    responses: () => ({
      200: SuccessTrue(),
      404: ErrorBody().check(z.describe('no such agent, or the skill is not installed on it')),
      ...commonErrorResponses(),
    }),
  },
  {
    operation: 'rateSkill',
    method: 'POST',
    path: '/api/skills/{skillId}/rating',
    auth: 'session',
    summary: "Rate a catalogue skill from 1 to 5 stars; rating again replaces the caller's earlier rating. The catalogue's `rating` is the average.",
    params: () => z.strictObject({ skillId: ResourceId() }),
    body: () => z.strictObject({ rating: z.number().check(z.int(), z.minimum(SKILL_RATING_MIN), z.maximum(SKILL_RATING_MAX)) }),
    example: { rating: 4 },
    responses: () => ({
      200: z.extend(SuccessTrue(), {
        skillId: z.string(),
        rating: z.number().check(z.describe("the skill's new average")),
        ratingCount: z.number().check(z.int()),
      }),
      404: ErrorBody(),
      ...commonErrorResponses(),
    }),
  },
  {
    operation: 'runtimeSkillCall',
    method: 'POST',
    path: '/api/instance/{userId}/runtime/agents/{agentId}/skills/{skill}',
    auth: 'runtime',
    summary: "Call a skill installed on the agent, from the agent's runtime.",
    description:
      "Called by the account's agent runtime, not by users: `Authorization: Bearer <gateway token>` (any other credential answers 401 `TOKEN_INVALID`). The body is the skill endpoint's body (`POST /api/skills/{skill}`) and so is the answer. A skill that is not installed on the agent, or disabled, answers 404, as does an agent that is not the account's.",
    params: () => z.strictObject({ userId: ResourceId(), agentId: ResourceId(), skill: ResourceId() }),
    body: () => z.looseObject({ action: z.optional(z.string()) }),
    bodyHandling: { validatedBy: 'handler', open: true },
    example: { action: 'search', genre: 'techno' },
    responses: skillResponses,
  },
  {
    operation: 'importVenues',
    method: 'POST',
    path: '/api/skills/venue-finder/catalogue',
    auth: 'admin',
    summary: 'Import venues into the catalogue venue-finder searches (operator only).',
    description:
      "The file format is this body: `{venues: [{id, name, city, country, type, capacity, price}]}` (price: one night's hire in USD). An entry with an id already stored replaces it; `replace: true` first removes every venue not in the file. Nothing is invented: an empty catalogue searches empty.",
    body: () => z.strictObject({ venues: z.array(VenueEntry()).check(z.minLength(1), z.maxLength(1000)), replace: z._default(z.boolean(), false) }),
    example: { venues: [{ id: 'albert-hall-mcr', name: 'Albert Hall', city: 'Manchester', country: 'GB', type: 'club', capacity: 1800, price: 1500 }] },
    responses: () => ({ 200: z.extend(SuccessTrue(), { imported: z.number().check(z.int()), removed: z.number().check(z.int()) }), ...commonErrorResponses() }),
  },
  {
    operation: 'importFestivals',
    method: 'POST',
    path: '/api/skills/festival-finder/catalogue',
    auth: 'admin',
    summary: 'Import festivals into the catalogue festival-finder searches (operator only).',
    description:
      'The file format is this body: `{festivals: [{id, name, country, city?, genres, startDate, endDate?, ticketPrice}]}` (ticketPrice in USD). Same id replaces; `replace: true` removes festivals not in the file.',
    body: () => z.strictObject({ festivals: z.array(FestivalEntry()).check(z.minLength(1), z.maxLength(1000)), replace: z._default(z.boolean(), false) }),
    example: {
      festivals: [
        { id: 'ade-2026', name: 'Amsterdam Dance Event', country: 'NL', city: 'Amsterdam', genres: ['electronic'], startDate: '2026-10-14', ticketPrice: 120 },
      ],
    },
    responses: () => ({ 200: z.extend(SuccessTrue(), { imported: z.number().check(z.int()), removed: z.number().check(z.int()) }), ...commonErrorResponses() }),
  },
] as const satisfies readonly RouteDefinition[];

export const skillsContract = defineGroup({
  group: 'skills',
  description: 'Skills marketplace: the catalogue, installing a skill on an agent, and the skill endpoints (spec 4.8).',
  // Skills call S3, the AI layer, chains and email, each loaded on its skill's first call.
  dynamoOnly: false,
  routes: [
    {
      operation: 'listSkills',
      method: 'GET',
      path: '/api/skills',
      auth: 'none',
      summary: 'The skill catalogue, optionally one category or only featured skills, with the category list and the featured skills.',
      query: () =>
        z.object({
          category: z.optional(z.enum(['all', ...SKILL_CATEGORIES])).check(z.describe('`all` or omitted lists every category')),
          featured: z.optional(z.enum(['true', 'false'])).check(z.describe('`true` lists featured skills only')),
        }),
      responses: () => ({
        200: z.object({ skills: z.array(SkillRecord()), categories: z.array(SkillCategory()), featured: z.array(SkillRecord()) }),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'installSkill',
      method: 'POST',
      path: '/api/skills',
      auth: 'session',
      summary: "Install a skill on an owned agent, within the plan's skill limit (429 when reached). Installing it again changes nothing.",
      description:
        "Needs an active subscription (admins exempt). The plan's skill limit (label 3, solo 10, collective 25, network 100; admins 100) counts the skills installed on **each agent**, held by a per-agent counter changed in the install's transaction, so concurrent installs cannot pass it. The running instance picks the skill up with its next state load (`GET /api/instance/{userId}/runtime/state`).",
      body: () =>
        z.strictObject({
          skillId: ResourceId().check(z.describe("the skill's id, its catalogue name")),
          agentId: ResourceId(),
        }),
      example: { skillId: 'setlist-oracle', agentId: 'agt_3f9c2a' },
      responses: () => ({
        200: z.extend(SuccessTrue(), { installed: z.boolean().check(z.describe('false when the agent already had the skill')), skill: InstalledSkillRecord() }),
        402: ErrorBody(),
        404: ErrorBody(),
        ...commonErrorResponses(),
        429: z
          .extend(ErrorBody(), { current: z.number().check(z.int()), limit: z.number().check(z.int()) })
          .check(z.describe("the agent already has the plan's number of skills")),
      }),
    },
    ...skillRoutes,
    ...skillGetRoutes,
    ...installRoutes,
    ...channelInboundRoutes,
    whatsappVerificationRoute,
  ],
});
