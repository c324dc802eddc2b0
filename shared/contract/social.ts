import * as z from 'zod';
import { commonErrorResponses, defineGroup, ErrorBody, IsoDate, ValidationErrorBody } from './route';

export const EvmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed, 42-character hex address');

/** Smallest-unit token amounts can exceed 2^53, so they travel as decimal strings. */
const IntegerString = z.string().regex(/^\d+$/, 'must be an integer in the smallest token unit');

/** Decentralised-social account id: a positive integer, sent as a string. */
export const Fid = z.string().regex(/^[1-9][0-9]{0,19}$/, 'must be a positive integer');

/** Self-description a metadata GET answers, so a client can discover how to call the POST. */
export const EndpointMetadata = z.object({
  endpoint: z.string().describe('the path'),
  method: z.literal('POST'),
  description: z.string(),
  requiredFields: z.array(z.string()),
  optionalFields: z.array(z.string()),
  response: z.array(z.string()).describe('fields of a successful answer'),
});

export const SOCIAL_SESSION_TTL_SECONDS = 86400;

const SocialSessionToken = z.string().regex(/^[A-Za-z0-9+/_-]+={0,2}$/, 'base64').describe('base64; valid for 86400 seconds');

const GatingFacts = {
  tokenGated: z.boolean().describe('whether token gating is enabled; when false everyone has access'),
  minBalance: IntegerString.describe('minimum balance of the gating token, in its smallest unit'),
  token: z.string().describe('symbol of the gating token'),
  chain: z.string().describe('network the balance is read on (`l2-main`)'),
};

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
      responses: { 200: EndpointMetadata, ...commonErrorResponses },
    },
    {
      operation: 'verifySocialIdentity',
      method: 'POST',
      path: '/api/auth/social/verify',
      auth: 'none',
      handlerValidates: true,
      summary: 'Verify a decentralised-social identity token and, with `address`, check token gating; answers a social session token.',
      description:
        '`fidToken` is verified with the social provider (signature, audience = this application, expiry). A missing or empty `fidToken`, or one that does not verify, answers 401; ' +
        'any other bad field (for example a malformed `address`) answers 400, which is why the handler validates the body itself. ' +
        'With `address` the wallet must hold at least `minBalance` of the gating token on l2-main: otherwise 403 `TOKEN_GATING_FAILED` with `required` and `minBalance`. ' +
        'Without `address` no gating check runs: `address` is null, `tokenGated` false and `accessLevel` `basic`. ' +
        '`sessionToken` is a base64 server-signed token (fid, address, access level, expiry 86400 s) to present to `POST /api/auth/social/refresh`; it is not a platform session cookie.',
      body: z.strictObject({
        fidToken: z.string().min(1).max(8192).describe('identity token issued by the social provider'),
        address: EvmAddress.optional().describe('wallet to check for token gating'),
      }),
      example: {
        fidToken: 'eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOjEyMzQ1LCJhdWQiOiJhcHAuZXhhbXBsZS5jb20iLCJleHAiOjE3MzY5NDU2MDB9.c2lnbmF0dXJl',
        address: '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4',
      },
      responses: {
        200: z.object({
          success: z.literal(true),
          sessionToken: SocialSessionToken,
          address: EvmAddress.nullable(),
          message: z.string(),
          tokenGated: z.boolean().describe('true when a gating check ran and passed'),
          accessLevel: z.enum(['basic', 'token-holder']).describe('`token-holder` when the gating check passed, `basic` otherwise'),
        }),
        ...commonErrorResponses,
        400: z.union([ValidationErrorBody, ErrorBody]),
        403: z.looseObject({
          error: z.string(),
          code: z.string().optional(),
          required: z.string().describe('what is missing, e.g. `at least 1000000000000000000 of TOKEN on l2-main`'),
          minBalance: IntegerString,
        }),
      },
    },
    {
      operation: 'getSocialRefreshInfo',
      method: 'GET',
      path: '/api/auth/social/refresh',
      auth: 'none',
      summary: 'Describe how to call `POST /api/auth/social/refresh`.',
      responses: { 200: EndpointMetadata, ...commonErrorResponses },
    },
    {
      operation: 'refreshSocialSession',
      method: 'POST',
      path: '/api/auth/social/refresh',
      auth: 'none',
      summary: 'Exchange a still-valid social session token for a new one.',
      description:
        '`refreshToken` is a `sessionToken` from verify or an earlier refresh. A missing or empty one answers 400; one that is malformed, forged or expired answers 401. ' +
        'The new token carries the same fid, address and access level.',
      body: z.strictObject({ refreshToken: z.string().min(1).max(8192).describe('base64') }),
      example: { refreshToken: 'eyJmaWQiOiIxMjM0NSIsImV4cCI6MTczNjk0NTYwMH0uc2lnbmF0dXJl' },
      responses: {
        200: z.object({
          success: z.literal(true),
          sessionToken: SocialSessionToken,
          expiresIn: z.number().int().positive().describe(`seconds; ${SOCIAL_SESSION_TTL_SECONDS}`),
          message: z.string(),
        }),
        ...commonErrorResponses,
      },
    },
    {
      operation: 'verifyTokenGating',
      method: 'POST',
      path: '/api/auth/token-gating/verify',
      auth: 'none',
      summary: 'Check whether a wallet holds enough of the gating token.',
      description:
        'A public read of the on-chain balance on l2-main; `fid` is echoed back and does not prove ownership of `address`. `hasAccess` is true when gating is disabled or the balance is at least `minBalance`. ' +
        '500 when the chain cannot be read.',
      body: z.strictObject({ fid: Fid, address: EvmAddress }),
      example: { fid: '12345', address: '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4' },
      responses: {
        200: z.object({
          fid: z.string(),
          address: EvmAddress,
          hasAccess: z.boolean(),
          ...GatingFacts,
          message: z.string(),
          timestamp: IsoDate,
        }),
        ...commonErrorResponses,
      },
    },
    {
      operation: 'getTokenGatingStatus',
      method: 'GET',
      path: '/api/auth/token-gating/verify',
      auth: 'none',
      summary: 'Token-gating status of a wallet, with the gating token and chain details.',
      description:
        '`rpcEndpoint` is the public RPC URL of the chain without any credentials (never a keyed provider URL). 500 when the chain cannot be read.',
      query: z.object({ address: EvmAddress }),
      responses: {
        200: z.object({
          address: EvmAddress,
          hasAccess: z.boolean(),
          ...GatingFacts,
          contractAddress: EvmAddress.describe('the gating token contract'),
          rpcEndpoint: z.url().describe('public RPC URL, no credentials'),
        }),
        ...commonErrorResponses,
      },
    },
  ],
});
