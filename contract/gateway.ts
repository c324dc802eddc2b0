import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate } from './common';
import { GATEWAY_PLUGIN_IDS, type GatewayPluginId } from './gateway-plugins';
import { defineGroup, lazySchema } from './route';
import { EVM_ADDRESS } from './evm';

export { GATEWAY_PLUGIN_IDS, type GatewayPluginId };

/** The plugins of spec 4.12; every one of them needs a session or a verified MPP credential. */
export const GATEWAY_PLUGINS = [
  { id: 'agent', purpose: 'multi-step agent orchestration', authRequired: true, streaming: true },
  { id: 'generate-text', purpose: 'LLM text generation', authRequired: true, streaming: true },
  { id: 'tts', purpose: 'speech synthesis', authRequired: true, streaming: false },
  { id: 'stt', purpose: 'speech transcription', authRequired: true, streaming: false },
] as const satisfies readonly { id: GatewayPluginId; purpose: string; authRequired: boolean; streaming: boolean }[];
export const GatewayPluginIdSchema = lazySchema(() => z.enum(GATEWAY_PLUGIN_IDS));
export const DEFAULT_GATEWAY_PLUGIN: GatewayPluginId = 'generate-text';
export const isGatewayPluginId = (id: string): id is GatewayPluginId => (GATEWAY_PLUGIN_IDS as readonly string[]).includes(id);

export const GATEWAY_PAYMENT_METHODS = ['card', 'mpp'] as const;
export const GatewayPaymentMethod = lazySchema(() => z.enum(GATEWAY_PAYMENT_METHODS));

/** CORS preflight answer of spec 4.12. */
export const GATEWAY_CORS = {
  allowMethods: ['POST', 'OPTIONS'],
  allowHeaders: ['Authorization', 'Content-Type', 'X-Plugin-Id', 'X-Payment-Method'],
} as const;

const Address = lazySchema(() => z.string().check(z.regex(EVM_ADDRESS, 'must be a 0x-prefixed 20-byte hex address')));
const TxHash = lazySchema(() => z.string().check(z.regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte transaction hash')));

export const GatewaySuccessBody = lazySchema(() =>
  z.looseObject({
    plugin: GatewayPluginIdSchema(),
    message: z.string().check(z.describe("the plugin's answer (text; the transcript for `stt`; for `tts` a short note beside the `audio` field)")),
    timestamp: IsoDate(),
    payment: z.discriminatedUnion('method', [
      z.object({ method: z.literal('card'), receipt: z.null() }),
      z.object({ method: z.literal('mpp'), receipt: TxHash().check(z.describe('the payment transaction hash')) }),
    ]),
  }),
);

/** Why a 402 was given: no payment, no subscription, MPP off, or why an MPP credential was refused. */
export const GATEWAY_PAYMENT_CODES = [
  'PAYMENT_REQUIRED',
  'SUBSCRIPTION_REQUIRED',
  'MPP_NOT_CONFIGURED',
  'MALFORMED_CREDENTIAL',
  'UNKNOWN_NONCE',
  'EXPIRED',
  'ALREADY_USED',
  'WRONG_PLUGIN',
  'TX_NOT_FOUND',
  'TX_REVERTED',
  'WRONG_CHAIN',
  'NOT_CONFIRMED',
  'WRONG_TOKEN',
  'WRONG_RECIPIENT',
  'AMOUNT_TOO_LOW',
  'PAYMENT_NOT_BOUND',
  'PAYMENT_BEFORE_CHALLENGE',
  'WRONG_REALM',
  'WRONG_METHOD',
  'WRONG_INTENT',
  'PULL_MODE_UNSUPPORTED',
  'UNKNOWN_RECEIPT',
] as const;
export type GatewayPaymentCode = (typeof GATEWAY_PAYMENT_CODES)[number];

/** The problem types of draft-httpauth-payment-00 (its registry's 402 entries), under their base URI. */
export const PAYMENT_PROBLEM_BASE = 'https://paymentauth.org/problems/';
export const PAYMENT_PROBLEMS = {
  'payment-required': 'Payment Required',
  'payment-insufficient': 'Payment Insufficient',
  'payment-expired': 'Payment Expired',
  'verification-failed': 'Payment Verification Failed',
  'malformed-credential': 'Malformed Payment Credential',
  'invalid-challenge': 'Invalid Payment Challenge',
} as const;
export type PaymentProblem = keyof typeof PAYMENT_PROBLEMS;

/** The problem type of each 402 `code`. */
export const PAYMENT_CODE_PROBLEMS: Record<GatewayPaymentCode, PaymentProblem> = {
  PAYMENT_REQUIRED: 'payment-required',
  SUBSCRIPTION_REQUIRED: 'payment-required',
  MPP_NOT_CONFIGURED: 'payment-required',
  MALFORMED_CREDENTIAL: 'malformed-credential',
  PULL_MODE_UNSUPPORTED: 'malformed-credential',
  UNKNOWN_NONCE: 'invalid-challenge',
  ALREADY_USED: 'invalid-challenge',
  WRONG_PLUGIN: 'invalid-challenge',
  WRONG_REALM: 'invalid-challenge',
  WRONG_METHOD: 'invalid-challenge',
  WRONG_INTENT: 'invalid-challenge',
  EXPIRED: 'payment-expired',
  AMOUNT_TOO_LOW: 'payment-insufficient',
  TX_NOT_FOUND: 'verification-failed',
  TX_REVERTED: 'verification-failed',
  WRONG_CHAIN: 'verification-failed',
  NOT_CONFIRMED: 'verification-failed',
  WRONG_TOKEN: 'verification-failed',
  WRONG_RECIPIENT: 'verification-failed',
  PAYMENT_NOT_BOUND: 'verification-failed',
  PAYMENT_BEFORE_CHALLENGE: 'verification-failed',
  UNKNOWN_RECEIPT: 'verification-failed',
};

const DecimalAmount = lazySchema(() => z.string().check(z.regex(/^\d+(\.\d+)?$/, 'must be a decimal amount')));

const Bytes32 = lazySchema(() => z.string().check(z.regex(/^0x[0-9a-f]{64}$/, 'must be a 0x-prefixed 32-byte hex value')));

/**
 * The 402 challenge body; the same figures go in the `WWW-Authenticate: Payment` challenge. Beside the
 * spec's `{error, code, message}` it is an RFC 9457 problem (`type`, `title`, `status`, `detail`,
 * `challengeId`), still sent as `application/json` so the spec's clients read it as before.
 * Without MPP configured, `recipient`, `nonce`, `expiresAt`, `memo` and `challengeId` are null, `description` says so, and there is no `WWW-Authenticate`.
 */
export const GatewayPaymentRequiredBody = lazySchema(() =>
  z.strictObject({
    error: z.literal('payment_required'),
    code: z.enum(GATEWAY_PAYMENT_CODES),
    message: z.string(),
    type: z
      .string()
      .check(
        z.describe(
          "RFC 9457 problem type from the drafts' registry, `https://paymentauth.org/problems/<payment-required|payment-insufficient|payment-expired|verification-failed|malformed-credential|invalid-challenge>`",
        ),
      ),
    title: z.string(),
    status: z.literal(402),
    detail: z.string().check(z.describe('the same text as `message`')),
    challengeId: z.nullable(z.string()).check(z.describe('the `id` of the fresh challenge (the same as `mpp.nonce`)')),
    mpp: z.strictObject({
      scheme: z.literal('tempo').check(z.describe('the Tempo charge method of the MPP drafts, push mode (the client pays, then sends the hash)')),
      amount: DecimalAmount().check(z.describe('price in the token (TIP-20, 6 decimals): the transfer must carry at least amount × 10^6 base units')),
      currency: Address().check(z.describe('token contract address')),
      recipient: z.nullable(Address()),
      description: z.string(),
      nonce: z.nullable(z.string().check(z.minLength(1))).check(z.describe('single use; valid for MPP_CHALLENGE_TTL_SECONDS and for this plugin only')),
      expiresAt: z.nullable(z.int().check(z.positive())).check(z.describe('epoch milliseconds')),
      chainId: z.int().check(z.positive(), z.describe('the chain to pay on')),
      memo: z
        .nullable(Bytes32())
        .check(
          z.describe(
            'the bytes32 to pass to `transferWithMemo(recipient, amount, memo)`: the MPP attribution memo bound to this challenge; a transfer without it does not pay',
          ),
        ),
    }),
    card: z.strictObject({
      checkoutUrl: z.string().check(z.describe('card checkout for this plugin, `/api/v1/payments/card/create?plugin=<id>`')),
      amount: z
        .number()
        .check(
          z.nonnegative(),
          z.describe(
            'price of one call paid by a one-off card checkout, in `currency` units (GATEWAY_CARD_PRICES, else the token price × GATEWAY_CARD_RATE rounded up to a penny, at least 0.30)',
          ),
        ),
      currency: z.string().check(z.describe('card billing currency, `gbp`')),
    }),
  }),
);

const EmptyBody = lazySchema(() => z.null().check(z.describe('no body')));

export const gatewayContract = defineGroup({
  group: 'gateway',
  description: 'v1 gateway: routes a request to a plugin, paid by card subscription or by an MPP on-chain payment (spec 4.12).',
  dynamoOnly: false,
  streams: true,
  routes: [
    {
      operation: 'callGateway',
      bodyHandling: { nonJsonStatus: 400, open: true },
      method: 'POST',
      path: '/api/v1/gateway',
      auth: 'optional',
      rateLimit: 'gateway',
      summary: 'Run a plugin (`agent`, `generate-text` (default), `tts`, `stt`), paid by card subscription or MPP.',
      description: [
        'The plugin is the `X-Plugin-Id` header, else the body `plugin`, else `generate-text`; an unknown plugin, from the header or the body, answers 502 `no_plugin`.',
        'Every field of the body except `plugin` is forwarded to the plugin as is. The body must be `application/json` (else 400 `UNSUPPORTED_CONTENT_TYPE`).',
        'Payment method: `X-Payment-Method` (`card` or `mpp`), else `mpp` when `Authorization: Payment <credential>` is sent, else `card`.',
        'Card payment needs a session (cookie, Bearer JWT or API key) whose stored account has an active subscription (admins exempt); `receipt` is null.',
        'Without an account, one call can be prepaid by card: the `card.checkoutUrl` of the 402 leads to a one-off checkout at `card.amount` `card.currency`, which returns a receipt token `gwr_…`; send it as `Authorization: Bearer gwr_…` (card payment; `payment` is `{method: "card", receipt: null}`).',
        'The receipt pays one call of its plugin within 24 h of payment and is spent atomically (parallel copies succeed once); a plugin failure leaves it redeemable until one call is served. Refused: 402 with `code` `UNKNOWN_RECEIPT` (not issued, or the payment not confirmed yet), `WRONG_PLUGIN`, `EXPIRED` or `ALREADY_USED`.',
        'Without payment the answer is 402 with the challenge body (a fresh single-use nonce, stored with its plugin, price, token, recipient, chain, realm and issue time) and one `WWW-Authenticate` challenge: `Payment amount=<amount>, currency=<currency>, recipient=<recipient>` (the spec\'s form) followed by the MPP drafts\' parameters `id` (the nonce), `realm` (`MPP_REALM`, default the host of APP_URL), `method="tempo"`, `intent="charge"`, `request` (base64url of the JCS JSON `{amount: <base units>, currency, recipient, methodDetails: {chainId, memo, supportedModes: ["push"]}}`) and `expires` (RFC 3339). Every 402 is also an RFC 9457 problem (`type` from the drafts\' registry, `title`, `status`, `detail`, `challengeId`) beside `{error, code, message}`, sent as `application/json`.',
        'MPP, push mode only: call `transferWithMemo(recipient, amount × 10^6, memo)` on the `currency` token on chain `mpp.chainId`, with the `mpp.memo` of the 402 (the MPP attribution memo bound to this challenge: tag, version, fingerprint of the realm, a client fingerprint, a nonce derived from the challenge id), then repeat the request with `Authorization: Payment {"scheme":"tempo","transaction":"<tx hash>","challengeNonce":"<nonce>"}` (the JSON, or the same base64url-encoded) or the drafts\' base64url `{challenge: {id, realm, method, intent, ...}, payload: {type: "hash", hash}, source?}`.',
        'With curl and a wallet: take `mpp.memo`, `mpp.nonce`, `mpp.recipient`, `mpp.currency` and the price from the 402, send the transfer from any wallet that can call a contract (e.g. Foundry: `cast send <currency> "transferWithMemo(address,uint256,bytes32)" <recipient> <base units> <memo>`), then `curl -X POST <origin>/api/v1/gateway -H \'Content-Type: application/json\' -H \'Authorization: Payment {"scheme":"tempo","transaction":"<tx hash>","challengeNonce":"<nonce>"}\' -d \'{"prompt":"..."}\'`.',
        'With the MPP SDK (npm `mppx`): `Mppx.create({methods: [tempo.charge({account})]}).fetch(url, init)` reads the challenge, pays with the bound memo in push mode and retries; `Receipt.fromResponse` reads the `Payment-Receipt`. Pull mode (a signed transaction for the server to broadcast, `payload.type: "transaction"`) is not offered: the gateway holds no key, pays no fees and submits nothing on chain, it only reads receipts; such a credential gets `PULL_MODE_UNSUPPORTED`.',
        "The nonce must be ours, unexpired, unused and for this plugin (and a drafts' credential must echo its realm, `tempo` and `charge`); the receipt must be successful, on the configured chain, with `MPP_CONFIRMATIONS` confirmations, and hold a `TransferWithMemo` log of the token to the recipient for at least the price in base units whose memo is bound to this challenge and realm (any client fingerprint), in a block whose timestamp is not before the second the challenge was issued in; the hash must be unused. Transfers are public: without the bound memo anyone could present another payer's transaction, so a transfer that is not bound pays nothing and its hash stays redeemable by the challenge it was made for.",
        "A refused credential is 402 with a fresh challenge and `code`: `UNKNOWN_NONCE`, `EXPIRED`, `ALREADY_USED`, `WRONG_PLUGIN`, `WRONG_REALM`, `WRONG_METHOD`, `WRONG_INTENT` (problem `invalid-challenge` or `payment-expired`); `TX_NOT_FOUND`, `TX_REVERTED`, `WRONG_CHAIN`, `NOT_CONFIRMED`, `WRONG_TOKEN`, `WRONG_RECIPIENT`, `PAYMENT_NOT_BOUND` (no memo, another challenge's or another realm's), `PAYMENT_BEFORE_CHALLENGE` (`verification-failed`); `AMOUNT_TOO_LOW` (`payment-insufficient`); `MALFORMED_CREDENTIAL`, `PULL_MODE_UNSUPPORTED` (`malformed-credential`); `MPP_NOT_CONFIGURED`. An unreachable chain RPC is 503 `CHAIN_UNAVAILABLE` and leaves the credential redeemable.",
        'Nonce and hash are spent in one transaction, so parallel copies of a credential succeed once. If the plugin fails after the payment was spent, the same credential stays redeemable until one call is served; it is never served twice.',
        'A success sets `x-plugin-id`, and for MPP also `Payment-Receipt` (base64url JSON `{status, method, reference: <tx hash>, timestamp}`).',
        "Plugin inputs (checked before any payment is spent; 400 `VALIDATION_ERROR` otherwise): `generate-text` and `agent` take `prompt` or `messages` ([{role, content}]), optional `system`, `model`, `taskType`, `temperature`, `top_p`, `maxTokens`; `agent` also `maxSteps` (≤ 20) and `agentId` (one of the caller's agents: its memory and installed skills become tools; an MPP payer gets account-free tools only) and answers with `steps`.",
        '`tts` takes `input` (≤ 4096 characters), `voice` (default `alloy`), `format` (`mp3` default, `opus`, `aac`, `flac`, `wav`, `pcm`), `model` (default `tts-1`) and answers `audio {base64, mediaType, format}`; `stt` takes `audio` (base64, ≤ 700 KB decoded), `model` (default `whisper-1`), `language`, and answers the transcript as `message` (OpenAI-compatible `/audio/speech` and `/audio/transcriptions` providers).',
        'With `Accept: text/event-stream`, `generate-text` and `agent` answer `text/event-stream`: `event: delta` `{text}` per chunk, then `event: done` with the success body. The status (200) and headers are sent with the first chunk, and from that chunk on the call counts as served: the payment is spent (an MPP credential is not redeemable again) even if the provider fails later, in which case the stream ends with `event: error` `{error, code, message?}` (as the non-streamed failure body, e.g. `{error: "internal", code: "PLUGIN_FAILED", message}`) instead of `done`. A failure before the first chunk is an ordinary JSON error answer and leaves an MPP payment redeemable.',
      ].join(' '),
      // A string, not the enum: an unknown plugin (body or header) answers the spec's 502 `no_plugin`.
      body: () =>
        z.looseObject({
          plugin: z.optional(z.string().check(z.minLength(1), z.maxLength(64))).check(z.describe('default `generate-text`; `X-Plugin-Id` overrides it')),
        }),
      example: { plugin: 'generate-text', prompt: 'Write a two-line gig announcement for Friday.', maxTokens: 120 },
      responses: () => ({
        ...commonErrorResponses(),
        200: GatewaySuccessBody(),
        401: z
          .union([z.object({ error: z.literal('Unauthorized') }), ErrorBody()])
          .check(z.describe('`Unauthorized`, or a malformed credential refused by the auth pipeline')),
        402: GatewayPaymentRequiredBody(),
        500: z.union([z.object({ error: z.literal('internal') }), ErrorBody()]),
        502: z.object({ error: z.literal('no_plugin') }),
        503: ErrorBody().check(z.describe('`CHAIN_UNAVAILABLE`: the payment chain RPC did not answer')),
      }),
    },
    {
      operation: 'gatewayPreflight',
      method: 'OPTIONS',
      path: '/api/v1/gateway',
      auth: 'none',
      summary: 'CORS preflight: allows POST and OPTIONS with the Authorization, Content-Type, X-Plugin-Id and X-Payment-Method headers.',
      description:
        'Origins allowed by `GATEWAY_ALLOWED_ORIGINS` (default the app origin) are echoed; `Payment-Receipt`, `WWW-Authenticate` and `x-plugin-id` are exposed to scripts.',
      responses: () => ({ 204: EmptyBody() }),
    },
  ],
});
