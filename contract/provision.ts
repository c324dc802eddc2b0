import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody } from './common';
import { defineGroup, lazySchema } from './route';

/** The aggregator first (the default), then the four model vendors. */
export const AiProvider = lazySchema(() => z.enum(['openrouter', 'openai', 'anthropic', 'google', 'mistral']));

/** `free` is accepted by the schema so the handler can answer the spec's 402, not a generic 400. */
export const ProvisionPlan = lazySchema(() => z.enum(['solo', 'collective', 'label', 'network', 'free']));

const ChannelToken = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(512)));

export const ProvisionChannelsBody = lazySchema(() =>
  z
    .strictObject({
      chatBotToken: z.optional(ChannelToken()).check(z.describe('chatBot bot token; at least one channel token is required')),
      chatBotUserId: z.optional(z.string().check(z.minLength(1), z.maxLength(64))).check(z.describe('chatBot user id the agent is bound to (owner binding)')),
      businessMessagingToken: z.optional(ChannelToken()).check(z.describe('businessMessaging access token; at least one channel token is required')),
      communityBotToken: z.optional(ChannelToken()).check(z.describe('communityBot bot token; at least one channel token is required')),
      aiProvider: z._default(AiProvider(), 'openrouter'),
      apiKey: z.optional(z.string().check(z.minLength(1), z.maxLength(512))).check(z.describe('key for the AI provider; stored encrypted, never returned')),
      plan: z.optional(ProvisionPlan()).check(z.describe('`free` or omitted answers 402 `PAYMENT_REQUIRED`')),
      email: z.optional(z.email()).check(z.describe("accepted for compatibility and ignored: the agent joins the authenticated caller's account")),
      cardSubscriptionId: z
        .optional(z.string().check(z.minLength(1), z.maxLength(255)))
        .check(z.describe('active card subscription id; required unless the caller is an authenticated admin or tester')),
    })
    .check(
      z.superRefine((body, ctx) => {
        if (body.chatBotToken === undefined && body.businessMessagingToken === undefined && body.communityBotToken === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [],
            message: 'at least one channel token is required: chatBotToken, businessMessagingToken or communityBotToken',
          });
        }
      }),
    ),
);

/** What the proxy returns (spec 4.5); the full backend record stays server-side. */
export const ProvisionChannelsResponse = lazySchema(() =>
  z.object({
    success: z.literal(true),
    userId: z.string(),
    subdomain: z.string(),
    url: z.url({ protocol: /^https$/ }),
    streamKey: z.string().check(z.describe('secret key for pushing the live stream; shown to the caller once')),
    liveStreamId: z.string(),
  }),
);

/** The live stream of a channel-provisioned agent, as its owner reads it back (spec 4.5's full backend fields). */
export const ProvisionedStream = lazySchema(() =>
  z.object({
    agentId: z.string(),
    provider: z.string(),
    liveStreamId: z.string(),
    rtmpServer: z.string(),
    streamKey: z.string().check(z.describe('secret: whoever holds it can publish to the stream')),
    rtmp: z.object({ server: z.string(), key: z.string() }),
    playbackUrl: z.string(),
    hls: z.object({ playlistUrl: z.string() }),
    lowLatency: z.boolean(),
    resolution: z.string(),
    bitrate: z.string(),
    createdAt: z.iso.datetime({ offset: true }),
    keyRotatedAt: z.nullable(z.iso.datetime({ offset: true })).check(z.describe('when the stream key was last replaced; null while it is the first one')),
  }),
);

const StreamParams = lazySchema(() =>
  z.strictObject({
    id: z.string().check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an agent id'), z.describe('the agent id')),
  }),
);

export const provisionContract = defineGroup({
  group: 'provision',
  description: 'Provisioning of an agent wired to messaging channels, with a dedicated live stream (spec 4.5); rate limited per client IP.',
  dynamoOnly: false,
  routes: [
    {
      operation: 'provisionWithChannels',
      method: 'POST',
      path: '/api/provision',
      auth: 'optional',
      // The replay record is keyed on the account the agent joins: the signed-in caller (session or
      // `sk_` key), the only subject this route ever writes for. A call without one is answered 402
      // before any write, so it has nothing to repeat and runs without a record; the body's `email`
      // or `cardSubscriptionId` are not secrets and must never choose whose record a key lands in.
      // The answer carries the stream key once, so the kept copy is sealed (policy.secretAnswer).
      policy: { idempotent: true, secretAnswer: true },
      rateLimit: 'provision',
      summary: 'Provision an agent connected to chatBot, communityBot and/or businessMessaging; proxied to the backend provisioning service.',
      description: [
        'At least one channel token is required (400). The removed identifier fields (phone number id, account id, guild id, channel id) are refused as unknown fields (400).',
        "The agent always joins the authenticated caller's own account (session or `sk_` API key). Without one the answer is 402 `PAYMENT_REQUIRED` with one",
        'message for every case, whatever `email`, `x-user-email` or `cardSubscriptionId` say: neither is a secret, so they never choose an account nor tell',
        'registered addresses from unknown ones. Signed in: 402 `PAYMENT_REQUIRED` when `plan` is omitted or `free`, or, unless the account is an admin or',
        "tester (its current, verified address is in the operator's list), when the STORED subscription (kept current by verified card webhooks) is not",
        'active, is not the one `cardSubscriptionId` names, or is not for `plan`. `email` and the header grant nothing: the bypass applies only to a signed-in',
        'admin or tester account. The agent goes through the same pipeline as `POST /api/agents/provision` (plan agent limit → 429 `AGENT_LIMIT_REACHED`,',
        'queued launch → 502 when the provisioning service is unavailable). Channel tokens, the AI provider key and the stream key are stored',
        'envelope-encrypted and never returned, except the stream key once in this answer and to the owner through `GET /api/provision/{id}/stream`.',
        'The live stream comes from the streaming adapter.',
      ].join(' '),
      body: ProvisionChannelsBody,
      example: {
        chatBotToken: '7412589630:AAHk3vQm9xZ2pLr8TnWc5yBd1FgE4sJuO6a',
        chatBotUserId: '528491736',
        aiProvider: 'openrouter',
        plan: 'solo',
        email: 'dj.nova@example.com',
        cardSubscriptionId: 'sub_1QfZ8kLmN3oP4qR5sT6uV7wX',
      },
      responses: () => ({
        ...commonErrorResponses(),
        200: ProvisionChannelsResponse(),
        402: z.looseObject({ error: z.string(), code: z.literal('PAYMENT_REQUIRED') }),
        429: z.union([z.looseObject({ error: z.string(), code: z.literal('AGENT_LIMIT_REACHED'), current: z.number(), limit: z.number() }), ErrorBody()]),
        502: ErrorBody(),
      }),
    },
    {
      operation: 'getProvisionedStream',
      method: 'GET',
      path: '/api/provision/{id}/stream',
      auth: 'session',
      rateLimit: 'agents',
      summary: 'Read back the live stream of an agent provisioned with `POST /api/provision`: RTMP server and key, playback and HLS URLs.',
      description:
        "Owner only: an agent that is not the caller's, or that was not provisioned with channels, answers 404. The stream key is decrypted for the owner; treat it as a secret.",
      params: StreamParams,
      responses: () => ({ ...commonErrorResponses(), 200: ProvisionedStream(), 404: ErrorBody() }),
    },
    {
      operation: 'rotateProvisionedStreamKey',
      method: 'POST',
      path: '/api/provision/{id}/stream/rotate',
      auth: 'session',
      rateLimit: 'agents',
      summary: 'Replace the stream key of a channel-provisioned agent (the old key stops publishing); answers the stream with the new key.',
      description:
        'For an owner whose key leaked: the streaming provider issues a new key for the same live stream (same id, server and playback URLs), which is stored envelope-encrypted. Owner only (404 otherwise); 502 when the streaming provider fails (the old key stays).',
      params: StreamParams,
      responses: () => ({ ...commonErrorResponses(), 200: ProvisionedStream(), 404: ErrorBody(), 502: ErrorBody() }),
    },
  ],
});
