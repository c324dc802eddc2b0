import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate, ValidationErrorBody } from './common';
import { defineGroup, lazySchema } from './route';
import { EVM_ADDRESS } from './evm';

export const EvmAddress = lazySchema(() => z.string().check(z.regex(EVM_ADDRESS, 'must be a 0x-prefixed, 42-character hex address')));

/** Smallest-unit token amounts can exceed 2^53, so they travel as decimal strings. */
const IntegerString = lazySchema(() => z.string().check(z.regex(/^\d+$/, 'must be an integer in the smallest token unit')));

/** Decentralised-social account id: a positive integer, sent as a string. */
export const Fid = lazySchema(() => z.string().check(z.regex(/^[1-9][0-9]{0,19}$/, 'must be a positive integer')));

/** Self-description a metadata GET answers, so a client can discover how to call the POST. */
export const EndpointMetadata = lazySchema(() =>
  z.object({
    endpoint: z.string().check(z.describe('the path')),
    method: z.literal('POST'),
    description: z.string(),
    requiredFields: z.array(z.string()),
    optionalFields: z.array(z.string()),
    response: z.array(z.string()).check(z.describe('fields of a successful answer')),
  }),
);

export const SOCIAL_SESSION_TTL_SECONDS = 86400;

const SocialSessionToken = lazySchema(() =>
  z
    .string()
    .check(
      z.regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64'),
      z.describe('base64 of a platform session JWT (send the decoded JWT as `Authorization: Bearer`); valid for 86400 seconds'),
    ),
);

const RefreshToken = lazySchema(() =>
  z.string().check(z.regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64'), z.describe('32 random bytes, base64; single use, valid 30 days')),
);

const GatingFacts = lazySchema(() => ({
  tokenGated: z.boolean().check(z.describe('whether token gating is enabled; when false everyone has access')),
  minBalance: IntegerString().check(z.describe('minimum balance of the gating token, in its smallest unit')),
  token: z.string().check(z.describe('symbol of the gating token')),
  chain: z.string().check(z.describe('network the balance is read on (`l2-main`)')),
}));

export const socialContract = defineGroup({
  group: 'social',
  description: 'Decentralised-social identity verification, its session refresh, and token gating (spec 4.2).',
  dynamoOnly: false,
  routes: [
    {
      operation: 'getSocialVerifyInfo',
      method: 'GET',
      path: '/api/auth/social/verify',
      auth: 'none',
      summary: 'Describe how to call `POST /api/auth/social/verify`.',
      responses: () => ({ 200: EndpointMetadata(), ...commonErrorResponses() }),
    },
    {
      operation: 'verifySocialIdentity',
      method: 'POST',
      path: '/api/auth/social/verify',
      auth: 'none',
      rateLimit: 'signIn',
      bodyHandling: { validatedBy: 'handler' },
      summary: 'Verify a decentralised-social identity token and, with `address`, check token gating; answers a session token and a refresh token.',
      description:
        '`fidToken` is a JWT of the social identity provider, verified against its JWKS (signature with an asymmetric algorithm, issuer, audience = this application, expiry); its `sub` is the fid. ' +
        'A missing or empty `fidToken` answers 401 `FID_TOKEN_REQUIRED`, one that does not verify 401 `FID_TOKEN_INVALID`; any other bad field (for example a malformed `address`) answers 400 `VALIDATION_ERROR`, which is why the handler validates the body itself. ' +
        'With `address` the wallet must hold at least `minBalance` of the gating token on l2-main: otherwise 403 `TOKEN_GATING_FAILED` with `required` and `minBalance` (the address is not proven to belong to the fid: gating is a balance check, as in the spec). ' +
        'Without `address` (or with gating off) `tokenGated` is false and `accessLevel` `basic`. ' +
        'The fid signs in to its platform account: the first verification creates one with the derived email `fid-<fid>@social.local` (and emits `user.created`). ' +
        '`sessionToken` is the base64 of a platform session JWT (decode it and send it as `Authorization: Bearer`) valid for `expiresIn` = 86400 seconds; ' +
        '`refreshToken` (32 random bytes, base64; only its hash is stored, valid 30 days, single use) gets a new one from `POST /api/auth/social/refresh`. ' +
        '503 `SOCIAL_NOT_CONFIGURED` when the provider JWKS or issuer is not configured, 503 `SOCIAL_PROVIDER_UNAVAILABLE` when its JWKS cannot be fetched; 503 `CHAIN_UNAVAILABLE` when the balance cannot be read (RPC down, too slow, or past the request deadline).',
      body: () =>
        z.strictObject({
          fidToken: z.string().check(z.minLength(1), z.maxLength(8192), z.describe('identity token (JWT) issued by the social provider')),
          address: z.optional(EvmAddress()).check(z.describe('wallet to check for token gating')),
        }),
      example: {
        fidToken: 'eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOjEyMzQ1LCJhdWQiOiJhcHAuZXhhbXBsZS5jb20iLCJleHAiOjE3MzY5NDU2MDB9.c2lnbmF0dXJl',
        address: '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4',
      },
      responses: () => ({
        200: z.object({
          success: z.literal(true),
          fid: Fid(),
          sessionToken: SocialSessionToken(),
          refreshToken: RefreshToken(),
          expiresIn: z.int().check(z.positive(), z.describe(`seconds the session token is valid; ${SOCIAL_SESSION_TTL_SECONDS}`)),
          address: z.nullable(EvmAddress()),
          message: z.string(),
          tokenGated: z.boolean().check(z.describe('true when a gating check ran and passed')),
          accessLevel: z.enum(['basic', 'token-holder']).check(z.describe('`token-holder` when the gating check passed, `basic` otherwise')),
        }),
        ...commonErrorResponses(),
        400: z.union([ValidationErrorBody(), ErrorBody()]),
        403: z.looseObject({
          error: z.string(),
          code: z.optional(z.string()),
          required: z.string().check(z.describe('what is missing, e.g. `at least 1000000000000000000 of TOKEN on l2-main`')),
          minBalance: IntegerString(),
        }),
        503: ErrorBody(),
      }),
    },
    {
      operation: 'getSocialRefreshInfo',
      method: 'GET',
      path: '/api/auth/social/refresh',
      auth: 'none',
      summary: 'Describe how to call `POST /api/auth/social/refresh`.',
      responses: () => ({ 200: EndpointMetadata(), ...commonErrorResponses() }),
    },
    {
      operation: 'refreshSocialSession',
      method: 'POST',
      path: '/api/auth/social/refresh',
      auth: 'none',
      rateLimit: 'signIn',
      summary: 'Exchange a refresh token for a new session token (and a new refresh token).',
      description:
        '`refreshToken` is the one from verify or from an earlier refresh. A missing or empty one answers 400; one that is unknown, used, expired, or whose account is gone or has had its sessions revoked (password change or reset) answers 401 `REFRESH_TOKEN_INVALID`. ' +
        'Refresh tokens rotate: each works once and the answer carries its successor.',
      body: () => z.strictObject({ refreshToken: z.string().check(z.minLength(1), z.maxLength(512), z.describe('base64')) }),
      example: { refreshToken: 'q3Xv9cJf0bN2kLr7TzWy5eA1uH8sDg4MpQo6iVxKc0E=' },
      responses: () => ({
        200: z.object({
          success: z.literal(true),
          sessionToken: SocialSessionToken(),
          refreshToken: RefreshToken(),
          expiresIn: z.int().check(z.positive(), z.describe(`seconds; ${SOCIAL_SESSION_TTL_SECONDS}`)),
          message: z.string(),
        }),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'verifyTokenGating',
      method: 'POST',
      path: '/api/auth/token-gating/verify',
      auth: 'none',
      rateLimit: 'chainRead',
      summary: 'Check whether a wallet holds enough of the gating token.',
      description:
        'A public read of the on-chain balance on l2-main; `fid` is echoed back and does not prove ownership of `address`. `hasAccess` is true when gating is disabled or the balance is at least `minBalance`. ' +
        '503 `CHAIN_UNAVAILABLE` when the chain cannot be read (RPC down, too slow, or past the request deadline).',
      body: () => z.strictObject({ fid: Fid(), address: EvmAddress() }),
      example: { fid: '12345', address: '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4' },
      responses: () => ({
        200: z.object({
          fid: z.string(),
          address: EvmAddress(),
          hasAccess: z.boolean(),
          ...GatingFacts(),
          message: z.string(),
          timestamp: IsoDate(),
        }),
        ...commonErrorResponses(),
        503: ErrorBody(),
      }),
    },
    {
      operation: 'getTokenGatingStatus',
      method: 'GET',
      path: '/api/auth/token-gating/verify',
      auth: 'none',
      rateLimit: 'chainRead',
      summary: 'Token-gating status of a wallet, with the gating token and chain details.',
      description:
        '`rpcEndpoint` is the public RPC URL of the chain without any credentials (never a keyed provider URL). `contractAddress` is null while gating is off. 503 `CHAIN_UNAVAILABLE` when the chain cannot be read.',
      query: () => z.object({ address: EvmAddress() }),
      responses: () => ({
        200: z.object({
          address: EvmAddress(),
          hasAccess: z.boolean(),
          ...GatingFacts(),
          contractAddress: z.nullable(EvmAddress()).check(z.describe('the gating token contract; null while gating is off')),
          rpcEndpoint: z.url().check(z.describe('public RPC URL, no credentials')),
        }),
        ...commonErrorResponses(),
        503: ErrorBody(),
      }),
    },
  ],
});
