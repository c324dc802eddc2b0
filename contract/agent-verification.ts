import * as z from 'zod/mini';
import { VerificationType } from './agent-records';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId, SuccessTrue, ValidationErrorBody } from './common';
import { defineGroup, lazySchema } from './route';
import { EVM_ADDRESS } from './evm';

const EvmAddress = lazySchema(() => z.string().check(z.regex(EVM_ADDRESS, 'must be a 0x-prefixed 20-byte hex address')));
const Bytes32Hex = lazySchema(() => z.string().check(z.regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex value')));

const IdParams = lazySchema(() => z.strictObject({ id: ResourceId() }));

/** Verification record (spec 2.9): every field but `verified` is null while unverified. */
export const AgentVerification = lazySchema(() =>
  z.discriminatedUnion('verified', [
    z.object({
      verified: z.literal(true),
      verificationType: VerificationType(),
      attestationUid: z.nullable(z.string()).check(z.describe('set for `eas`')),
      verifierAddress: z.nullable(EvmAddress()).check(z.describe('the wallet that produced the proof, when there is one')),
      verifiedAt: IsoDate(),
      metadata: z.nullable(z.record(z.string(), z.json())),
    }),
    z.object({
      verified: z.literal(false),
      verificationType: z.null(),
      attestationUid: z.null(),
      verifierAddress: z.null(),
      verifiedAt: z.null(),
      metadata: z.null(),
    }),
  ]),
);

const SIGNATURE_TYPES: readonly string[] = ['coinbase', 'ens', 'webauthn'];

export const VerifyAgentBody = lazySchema(() =>
  z
    .strictObject({
      verificationType: VerificationType(),
      attestationUid: z.optional(Bytes32Hex()).check(z.describe('required for `eas`: the UID of the attestation about this agent')),
      walletAddress: z
        .optional(EvmAddress())
        .check(
          z.describe("for `eas`: the attestation's recipient, accepted when the account has proven it or with `signature` by it; omitted, any proven address"),
        ),
      signature: z
        .optional(z.string().check(z.minLength(1), z.maxLength(8192)))
        .check(z.describe('required for `coinbase`, `ens` and `webauthn`; for `eas` with a `walletAddress` the account has not proven')),
      ensName: z
        .optional(z.string().check(z.minLength(3), z.maxLength(255)))
        .check(z.describe('required for `ens`: the name that must resolve to the signing wallet')),
    })
    .check(
      z.superRefine((body, ctx) => {
        if (body.verificationType === 'eas' && body.attestationUid === undefined) {
          ctx.addIssue({ code: 'custom', path: ['attestationUid'], message: 'attestationUid is required for eas verification' });
        }
        if (body.verificationType === 'ens' && body.ensName === undefined) {
          ctx.addIssue({ code: 'custom', path: ['ensName'], message: 'ensName is required for ens verification' });
        }
        if (SIGNATURE_TYPES.includes(body.verificationType) && body.signature === undefined) {
          ctx.addIssue({ code: 'custom', path: ['signature'], message: `signature is required for ${body.verificationType} verification` });
        }
      }),
    ),
);

/** WebAuthn ceremony options as the browser API takes them (PublicKeyCredentialCreationOptionsJSON / RequestOptionsJSON). */
const WebauthnOptions = lazySchema(() => z.looseObject({ challenge: z.string().check(z.describe('base64url, single use, 5 minutes')) }));

const Base64Url = lazySchema(() => z.string().check(z.regex(/^[A-Za-z0-9_-]+$/, 'base64url'), z.maxLength(4096)));

/** PublicKeyCredential.toJSON() of a newly created passkey (RegistrationResponseJSON). */
const PasskeyRegistrationResponse = lazySchema(() =>
  z.object({
    id: Base64Url(),
    rawId: Base64Url(),
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON: Base64Url(),
      attestationObject: Base64Url(),
      transports: z.optional(z.array(z.string().check(z.maxLength(32))).check(z.maxLength(8))),
    }),
    authenticatorAttachment: z.optional(z.enum(['platform', 'cross-platform'])),
    clientExtensionResults: z._default(z.record(z.string(), z.json()), {}),
  }),
);

export const agentVerificationContract = defineGroup({
  group: 'agent-verification',
  description: [
    'Verification of owned agents (EAS attestations, wallet and ENS signatures, passkeys), rate limited by the `agents` scope like the agents group.',
    'Apart from the agents group because the proofs need viem, ENS normalisation and WebAuthn (about 500 KB of bundle) that listing and provisioning never use.',
  ].join(' '),
  dynamoOnly: false,
  routes: [
    {
      operation: 'getAgentVerification',
      method: 'GET',
      path: '/api/agents/{id}/verify',
      auth: 'session',
      rateLimit: 'agents',
      summary: "Read an owned agent's verification record.",
      params: IdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: AgentVerification(),
        404: ErrorBody(),
      }),
    },
    {
      operation: 'verifyAgent',
      method: 'POST',
      path: '/api/agents/{id}/verify',
      auth: 'session',
      rateLimit: 'agents',
      summary: 'Verify an owned agent with an EAS attestation or a wallet / passkey signature.',
      description: [
        '`attestationUid` is required for `eas`; `signature` for `coinbase`, `ens` and `webauthn` (400 when missing).',
        'Only a proof that was checked is stored: for `coinbase` and `ens` the `signature` must be an EIP-191',
        '(personal_sign) signature of the message `Verify agent <agentId> on the agent platform` whose signer equals `walletAddress` (when given;',
        'else the recovered signer is recorded as `verifierAddress`), otherwise 400 `VERIFICATION_FAILED`; then for `coinbase` the signer must hold',
        "Coinbase's Verified Account attestation on Base (looked up in Coinbase's attestation indexer, then read from EAS and checked like `eas` below,",
        'plus the Coinbase attester: 422 `COINBASE_NOT_VERIFIED` when there is none, 422 `ATTESTATION_ATTESTER_MISMATCH`), and for `ens` `ensName` must',
        'resolve to the signer through the ENS Universal Resolver (422 `ENS_NAME_MISMATCH`; 503 `ENS_NOT_CONFIGURED` without an ENS RPC). For `eas` the attestation is read from the',
        'EAS contract on chain: it must exist (422 `ATTESTATION_NOT_FOUND`), not be revoked or expired (422 `ATTESTATION_REVOKED` / `ATTESTATION_EXPIRED`),',
        'carry the configured schema (422 `ATTESTATION_SCHEMA_MISMATCH`) and name as recipient an address the account has proven (422 `ATTESTATION_RECIPIENT_MISMATCH`):',
        'without `walletAddress` its wallet sign-in address or hosted wallet; a given `walletAddress` only when it is one of those or `signature` is its',
        'EIP-191 signature of the message above (else 400 `VERIFICATION_FAILED`), since an attestation is public and quoting its recipient proves nothing;',
        'a chain that cannot be read answers 503 `CHAIN_UNAVAILABLE`, a platform without EAS settings 503 `EAS_NOT_CONFIGURED`.',
        'For `webauthn` the `signature` is the JSON of the passkey assertion (PublicKeyCredential.toJSON()) over the challenge of',
        '`POST /api/agents/{id}/webauthn/verify-options`: the challenge is single use (422 `WEBAUTHN_CHALLENGE_MISSING` when there is none),',
        'the passkey must be one the account registered (422 `UNKNOWN_PASSKEY`) and the signature must verify (400 `VERIFICATION_FAILED`); its counter is then moved forward.',
        '`metadata.checked` says which proof was checked.',
        'Re-verifying replaces the previous record.',
      ].join(' '),
      params: IdParams,
      body: VerifyAgentBody,
      example: {
        verificationType: 'eas',
        attestationUid: '0x5f1b3c9e2a7d4b6f8e0c1a3d5b7f9e2c4a6d8b0f1e3c5a7d9b2f4e6c8a0d1b3f',
        walletAddress: '0x8ba1f109551bD432803012645Ac136ddd64DBA72',
      },
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({
          success: z.literal(true),
          verified: z.literal(true),
          verificationType: VerificationType(),
          attestationUid: z.nullable(z.string()),
          verifiedAt: IsoDate(),
        }),
        400: z.union([ValidationErrorBody(), z.looseObject({ error: z.string(), code: z.literal('VERIFICATION_FAILED') })]),
        404: ErrorBody(),
        422: ErrorBody(),
        503: ErrorBody(),
      }),
    },
    {
      operation: 'passkeyRegistrationOptions',
      method: 'POST',
      path: '/api/agents/{id}/webauthn/register-options',
      auth: 'session',
      rateLimit: 'agents',
      summary: 'Start registering a passkey (WebAuthn) that can verify agents: answers the creation options for navigator.credentials.create().',
      description:
        'The passkey belongs to the account (any of its agents can later be verified with it); the agent id only scopes the request to an owned agent. ' +
        'The options carry a single-use challenge valid for 5 minutes; asking again replaces it. The relying party is the platform web origin (`APP_URL`).',
      params: IdParams,
      responses: () => ({ ...commonErrorResponses(), 200: WebauthnOptions(), 404: ErrorBody() }),
    },
    {
      operation: 'registerPasskey',
      method: 'POST',
      path: '/api/agents/{id}/webauthn/register',
      auth: 'session',
      rateLimit: 'agents',
      summary: 'Finish registering a passkey: send the JSON of the created credential (PublicKeyCredential.toJSON()).',
      description:
        'The attestation is checked with the pending challenge, the origin and the relying party id; the challenge is consumed whatever the outcome. ' +
        '400 `VERIFICATION_FAILED` when the response does not verify, 422 `WEBAUTHN_CHALLENGE_MISSING` without a pending challenge, 409 `PASSKEY_EXISTS` for a credential already registered.',
      params: IdParams,
      body: () => z.strictObject({ response: PasskeyRegistrationResponse() }),
      example: {
        response: {
          id: 'q2Fh6kR0yJ8wX5mZ1nB3cA',
          rawId: 'q2Fh6kR0yJ8wX5mZ1nB3cA',
          type: 'public-key',
          response: { clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0', attestationObject: 'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVgA' },
          clientExtensionResults: {},
        },
      },
      responses: () => ({
        ...commonErrorResponses(),
        201: z.object({ credentialId: z.string(), createdAt: IsoDate() }),
        404: ErrorBody(),
        409: ErrorBody(),
        422: ErrorBody(),
      }),
    },
    {
      operation: 'passkeyAssertionOptions',
      method: 'POST',
      path: '/api/agents/{id}/webauthn/verify-options',
      auth: 'session',
      rateLimit: 'agents',
      summary: 'Start verifying an agent with a passkey: answers the request options for navigator.credentials.get().',
      description:
        "Lists the account's passkeys as allowed credentials and carries a single-use challenge for this agent, valid for 5 minutes. " +
        'Then `POST /api/agents/{id}/verify` with `verificationType: "webauthn"` and `signature` = the JSON of the assertion. 422 `NO_PASSKEY` before any passkey is registered.',
      params: IdParams,
      responses: () => ({ ...commonErrorResponses(), 200: WebauthnOptions(), 404: ErrorBody(), 422: ErrorBody() }),
    },
    {
      operation: 'removeAgentVerification',
      method: 'DELETE',
      path: '/api/agents/{id}/verify',
      auth: 'session',
      rateLimit: 'agents',
      summary: 'Remove the verification of an owned agent (`verified` back to false).',
      params: IdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: SuccessTrue(),
        404: ErrorBody(),
      }),
    },
  ],
});
