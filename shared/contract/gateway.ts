import * as z from 'zod';
import { commonErrorResponses, defineGroup, ErrorBody, IsoDate } from './route';

/** The plugins of spec 4.12; every one of them needs a session or a verified MPP credential. */
export const GATEWAY_PLUGINS = [
  { id: 'agent', purpose: 'multi-step agent orchestration', authRequired: true, streaming: true },
  { id: 'generate-text', purpose: 'LLM text generation', authRequired: true, streaming: true },
  { id: 'tts', purpose: 'speech synthesis', authRequired: true, streaming: false },
  { id: 'stt', purpose: 'speech transcription', authRequired: true, streaming: false },
] as const;

export type GatewayPluginId = (typeof GATEWAY_PLUGINS)[number]['id'];
export const GATEWAY_PLUGIN_IDS = GATEWAY_PLUGINS.map((p) => p.id) as [GatewayPluginId, ...GatewayPluginId[]];
export const GatewayPluginIdSchema = z.enum(GATEWAY_PLUGIN_IDS);
export const DEFAULT_GATEWAY_PLUGIN: GatewayPluginId = 'generate-text';

export const GATEWAY_PAYMENT_METHODS = ['card', 'mpp'] as const;
export const GatewayPaymentMethod = z.enum(GATEWAY_PAYMENT_METHODS);

/** CORS preflight answer of spec 4.12. */
export const GATEWAY_CORS = {
  allowMethods: ['POST', 'OPTIONS'],
  allowHeaders: ['Authorization', 'Content-Type', 'X-Plugin-Id', 'X-Payment-Method'],
} as const;

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');
const TxHash = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte transaction hash');

export const GatewaySuccessBody = z.object({
  plugin: GatewayPluginIdSchema,
  message: z.string(),
  timestamp: IsoDate,
  payment: z.discriminatedUnion('method', [
    z.object({ method: z.literal('card'), receipt: z.null() }),
    z.object({ method: z.literal('mpp'), receipt: TxHash.describe('the payment transaction hash') }),
  ]),
});

/** The 402 challenge body; the same figures go in `WWW-Authenticate: Payment amount=.., currency=.., recipient=..`. */
export const GatewayPaymentRequiredBody = z.strictObject({
  error: z.literal('payment_required'),
  message: z.string(),
  mpp: z.strictObject({
    scheme: z.string(),
    amount: z.string().regex(/^\d+(\.\d+)?$/, 'must be a decimal amount'),
    currency: Address.describe('token contract address'),
    recipient: Address,
    description: z.string(),
    nonce: z.string().min(1),
    expiresAt: z.number().int().positive().describe('epoch milliseconds'),
  }),
  card: z.strictObject({
    checkoutUrl: z.string().describe('card checkout for this plugin, `/api/v1/payments/card/create?plugin=<id>`'),
    amount: z.number().nonnegative(),
    currency: z.string(),
  }),
});

const EmptyBody = z.null().describe('no body');

export const gatewayContract = defineGroup({
  group: 'gateway',
  description: 'v1 gateway: routes a request to a plugin, paid by card subscription or by an MPP on-chain payment (spec 4.12).',
  dynamoOnly: false,
  routes: [
    {
      operation: 'callGateway',
      method: 'POST',
      path: '/api/v1/gateway',
      auth: 'optional',
      rateLimit: 'gateway',
      summary: 'Run a plugin (`agent`, `generate-text` (default), `tts`, `stt`), paid by card subscription or MPP.',
      description: [
        'The plugin is the `X-Plugin-Id` header, else the body `plugin`, else `generate-text`; an unknown plugin, from the header or the body, answers 502 `no_plugin`.',
        'Every field of the body except `plugin` is forwarded to the plugin as is.',
        'Payment method: `X-Payment-Method` (`card` or `mpp`), else `mpp` when `Authorization: Payment <credential>` is sent, else `card`.',
        'The MPP credential is JSON `{scheme, transaction, challengeNonce}`; the transaction must pay the challenged amount to the recipient, each nonce and transaction hash is accepted once, and with MPP no session is needed.',
        'Card payment needs a session whose account has an active subscription.',
        'Without payment the answer is 402 with the challenge body and a `WWW-Authenticate: Payment amount=<amount>, currency=<currency>, recipient=<recipient>` header.',
        'A success sets `x-plugin-id`, and for MPP also `Payment-Receipt`. `Accept: text/event-stream` streams the answer as server-sent events for the plugins that stream (`agent`, `generate-text`).',
      ].join(' '),
      openBody: true,
      // A string, not the enum: an unknown plugin (body or header) answers the spec's 502 `no_plugin`.
      body: z.looseObject({ plugin: z.string().min(1).max(64).optional().describe('default `generate-text`; `X-Plugin-Id` overrides it') }),
      example: { plugin: 'generate-text', prompt: 'Write a two-line gig announcement for Friday.', maxTokens: 120 },
      responses: {
        ...commonErrorResponses,
        200: GatewaySuccessBody,
        401: z.union([z.object({ error: z.literal('Unauthorized') }), ErrorBody]).describe('`Unauthorized`, or a malformed credential refused by the auth pipeline'),
        402: GatewayPaymentRequiredBody,
        500: z.union([z.object({ error: z.literal('internal') }), ErrorBody]),
        502: z.object({ error: z.literal('no_plugin') }),
      },
    },
    {
      operation: 'gatewayPreflight',
      method: 'OPTIONS',
      path: '/api/v1/gateway',
      auth: 'none',
      summary: 'CORS preflight: allows POST and OPTIONS with the Authorization, Content-Type, X-Plugin-Id and X-Payment-Method headers.',
      responses: { 204: EmptyBody },
    },
  ],
});
