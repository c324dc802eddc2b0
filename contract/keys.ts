import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId, SuccessTrue, ValidationErrorBody } from './common';
import { defineGroup, lazySchema } from './route';

/** Most API keys one account may hold; creating one more answers 400 `KEY_LIMIT`. */
export const API_KEYS_PER_ACCOUNT = 25;
export const API_KEY_NAME_MAX = 64;

/** A key record as listed and read (spec 2.10); the key itself is never retrievable again. */
export const ApiKeyRecord = lazySchema(() =>
  z.object({
    id: z.string(),
    name: z.string().check(z.maxLength(API_KEY_NAME_MAX)),
    keyPreview: z.string().check(z.describe('truncated preview such as `sk_AbC…9xYz`; enough to recognise a key, not to use it')),
    createdAt: IsoDate(),
    lastUsed: z.nullable(IsoDate()).check(z.describe('null until the key is first used')),
  }),
);

export const CreateApiKeyBody = lazySchema(() =>
  z.strictObject({
    name: z.string().check(z.trim(), z.minLength(1, 'name is required'), z.maxLength(API_KEY_NAME_MAX)),
  }),
);

const IdParams = lazySchema(() => z.strictObject({ id: ResourceId() }));

export const keysContract = defineGroup({
  group: 'keys',
  description: [
    'API keys of the calling account (spec 4.7), used as `Authorization: Bearer sk_...`.',
    'A key is shown once, in the create answer; only its SHA-256 hash is stored.',
    `An account holds at most ${API_KEYS_PER_ACCOUNT} keys: creating one more answers 400 with code \`KEY_LIMIT\` (the cap is enforced in the database transaction that creates the key).`,
    "A key id that is not the caller's answers 404, exactly like a missing one.",
    'Keys are managed only from a signed-in session (cookie or Bearer JWT): a request authenticated with an API key answers 403 `SESSION_REQUIRED` on every route here, so a leaked key cannot mint, list or revoke keys.',
    'A revoked key is refused (401 `TOKEN_INVALID`) from the next request on.',
    '`lastUsed` is recorded when a key authenticates, at a resolution of one minute.',
  ].join(' '),
  dynamoOnly: true,
  routes: [
    {
      operation: 'listApiKeys',
      method: 'GET',
      path: '/api/keys',
      auth: 'session',
      summary: "List the caller's API keys (previews only, never the keys).",
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ keys: z.array(ApiKeyRecord()) }),
      }),
    },
    {
      operation: 'createApiKey',
      method: 'POST',
      path: '/api/keys',
      auth: 'session',
      // A client that lost the answer gets the same key again, not a second key counting against the limit.
      policy: { idempotent: true, secretAnswer: true },
      summary: 'Create an API key; the `sk_` key is returned once and can never be read again.',
      description: `400 \`KEY_LIMIT\` when the account already holds ${API_KEYS_PER_ACCOUNT} keys.`,
      body: CreateApiKeyBody,
      example: { name: 'CI deploy key' },
      responses: () => ({
        ...commonErrorResponses(),
        201: z.object({
          id: z.string(),
          name: z.string(),
          key: z.string().check(z.regex(/^sk_[A-Za-z0-9_-]{32,}$/, 'must be an sk_ key')),
          createdAt: IsoDate(),
        }),
        400: z.union([ValidationErrorBody(), z.looseObject({ error: z.string(), code: z.literal('KEY_LIMIT'), limit: z.number().check(z.int()) })]),
      }),
    },
    {
      operation: 'getApiKey',
      method: 'GET',
      path: '/api/keys/{id}',
      auth: 'session',
      summary: 'Read one owned API key record (without the key).',
      params: IdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: ApiKeyRecord(),
        404: ErrorBody(),
      }),
    },
    {
      operation: 'deleteApiKey',
      method: 'DELETE',
      path: '/api/keys/{id}',
      auth: 'session',
      summary: 'Revoke an owned API key; requests with it are refused from then on.',
      params: IdParams,
      responses: () => ({
        ...commonErrorResponses(),
        200: SuccessTrue(),
        404: ErrorBody(),
      }),
    },
  ],
});
