import * as z from 'zod/mini';
import { CallbackPath, RedirectBody, SESSION_COOKIE_NOTE, SignedInBody } from './account-fields';
import { commonErrorResponses, ErrorBody, IsoDate } from './common';
import { defineGroup } from './route';

/** Apart from the password accounts: only these routes carry viem's SIWE parser and signature checks, so no other function bundles them. */
export const walletSignInContract = defineGroup({
  group: 'wallet-sign-in',
  description: 'Sign-In with Ethereum (EIP-4361): single-use nonces and the signed-message callback (spec 4.1).',
  dynamoOnly: false,
  routes: [
    {
      operation: 'getSiweNonce',
      method: 'GET',
      path: '/api/auth/nonce',
      auth: 'none',
      // Each nonce is a write: unauthenticated callers share the sign-in budget per address.
      rateLimit: 'signIn',
      summary: 'Issue a single-use nonce to put in a Sign-In with Ethereum (EIP-4361) message.',
      description:
        'The nonce is stored server-side with a 10-minute expiry and is consumed by the first wallet sign-in that presents it, whether that sign-in succeeds or not.',
      responses: () => ({
        200: z.object({
          nonce: z.string().check(z.regex(/^[A-Za-z0-9]{8,64}$/), z.describe('alphanumeric, as EIP-4361 requires')),
          expiresAt: IsoDate(),
        }),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'signInWithWallet',
      bodyHandling: { validatedBy: 'handler' },
      policy: { sameOrigin: true },
      method: 'POST',
      path: '/api/auth/callback/wallet',
      auth: 'none',
      rateLimit: 'signIn',
      summary: 'Sign in with a signed SIWE message; sets the session cookie and redirects to the callback URL.',
      description:
        'The message must be on chain id 0x2105 (8453), its domain must match the configured application URL, its nonce must be one issued by `GET /api/auth/nonce` ' +
        'that is unexpired and unused (consumed atomically), and the signature must verify (EOA, deployed smart wallet via ERC-1271, or undeployed smart wallet via ERC-6492). ' +
        'Missing or malformed `message`/`signature`, a message that does not parse, domain/URI/chain mismatch, an `Issued At` in the future, an expired (`Expiration Time`) or not yet valid (`Not Before`) message answer 401 `SIWE_INVALID`; ' +
        'an unknown, expired or used nonce 401 `NONCE_INVALID`; a signature that does not verify 401 `SIGNATURE_INVALID` (the spec names 401 for missing fields, so the handler validates the body itself). ' +
        'Smart-wallet signatures are checked through the chain RPC with a bounded timeout: when it is not configured, down or too slow the answer is 503 `CHAIN_UNAVAILABLE` (ask for a new nonce and retry). ' +
        'A wallet without an account gets one, with the wallet-derived email `<lower-case address>@wallet.local` (and emits `user.created`); if an account exists for the wallet-derived email the wallet is linked to it. ' +
        `${SESSION_COOKIE_NOTE} The answer is a 302 to \`callbackUrl\` (default \`/\`), or 200 \`{user}\` when the request sends \`Accept: application/json\`.`,
      query: () => z.object({ callbackUrl: z.optional(CallbackPath()) }),
      body: () =>
        z.strictObject({
          message: z.string().check(z.minLength(1), z.maxLength(8192), z.describe('the full EIP-4361 message text')),
          signature: z
            .string()
            .check(z.maxLength(32768), z.regex(/^0x[0-9a-fA-F]+$/, 'must be 0x-prefixed hex'), z.describe('0x-prefixed; ERC-6492 wrapped signatures are long')),
        }),
      example: {
        message:
          'app.example.com wants you to sign in with your Ethereum account:\n0x5B38Da6a701c568545dCfcB03FcB875f56beddC4\n\nSign in to the agent platform.\n\nURI: https://app.example.com\nVersion: 1\nChain ID: 8453\nNonce: k8Jd2mQp7XrT4vLz\nIssued At: 2025-01-15T10:00:00.000Z',
        signature: '0x454349e422f05297191ead13e21d3db520e5abef52055e4964b82fb213f593a1043a718774c572bd8a25adbeb1bfcd5c0256ae11cecf9f9c3f925d0e52beaf891b',
      },
      responses: () => ({ 200: SignedInBody(), 302: RedirectBody(), 503: ErrorBody(), ...commonErrorResponses() }),
    },
  ],
});
