import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId, ValidationErrorBody } from './common';
import { defineGroup, lazySchema } from './route';

export { ResourceId };

/** Spec 2.11: one value, measured as its compact JSON encoding in UTF-8 bytes. */
export const MEMORY_VALUE_MAX_BYTES = 100 * 1024;
export const MEMORY_BULK_MAX_KEYS = 50;
/**
 * A bulk write is one DynamoDB transaction (all-or-nothing), and a transaction holds at most 4 MB;
 * 50 values of 100 KB would not fit, so the values of one bulk write together stay within 3.5 MB.
 * The request body cap (MAX_BODY_BYTES, 1 MB by default) answers 413 before this is reached.
 */
export const MEMORY_BULK_MAX_TOTAL_BYTES = 3.5 * 1024 * 1024;
export const MEMORY_KEY_MAX_LENGTH = 256;

/** The codes of the limit answers (400), beside the generic VALIDATION_ERROR. */
export const MEMORY_LIMIT_CODES = ['MEMORY_VALUE_TOO_LARGE', 'MEMORY_TOO_MANY_KEYS', 'MEMORY_BULK_TOO_LARGE', 'MEMORY_EMPTY'] as const;

/**
 * Any characters, but whole ones: a lone UTF-16 surrogate cannot be stored as UTF-8 and would come
 * back as another key. 256 UTF-16 units are at most 768 bytes, well inside the 1 KB sort key.
 */
export const MemoryKey = lazySchema(() =>
  z.string().check(
    z.minLength(1),
    z.maxLength(MEMORY_KEY_MAX_LENGTH),
    z.refine((k) => !/\p{Cs}/u.test(k), 'must not contain unpaired surrogates'),
  ),
);

const SingleMemoryWrite = lazySchema(() =>
  z.strictObject({
    agentId: ResourceId(),
    key: MemoryKey(),
    memory: z.json().check(z.describe(`any JSON value, at most ${MEMORY_VALUE_MAX_BYTES} bytes once encoded`)),
  }),
);

const BulkMemoryWrite = lazySchema(() =>
  z.strictObject({
    agentId: ResourceId(),
    memory: z.record(MemoryKey(), z.json()).check(z.describe(`at most ${MEMORY_BULK_MAX_KEYS} keys, each value at most ${MEMORY_VALUE_MAX_BYTES} bytes`)),
  }),
);

export const memoryContract = defineGroup({
  group: 'memory',
  description: 'Agent key-value memory (spec 4.6).',
  dynamoOnly: false,
  routes: [
    {
      operation: 'getMemory',
      method: 'GET',
      path: '/api/memory',
      auth: 'session',
      summary: "Read an owned agent's memory.",
      description:
        "`lastUpdated` is the newest write among the keys, null while the memory is empty. An agent that is not the caller's answers 404, exactly like a missing one.",
      query: () => z.strictObject({ agentId: ResourceId() }),
      responses: () => ({
        200: z.object({ memory: z.record(z.string(), z.json()), agentId: z.string(), count: z.number().check(z.int()), lastUpdated: z.nullable(IsoDate()) }),
        404: ErrorBody(),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'writeMemory',
      method: 'POST',
      path: '/api/memory',
      auth: 'session',
      // A retried write gets the first answer (its `saved`), not a second write over a newer value.
      policy: { idempotent: true },
      summary: 'Write one key (`key` + `memory`) or up to 50 keys at once (`memory` object); bulk writes are all-or-nothing.',
      description: [
        `Limits, on the compact JSON encoding in UTF-8: each value at most ${MEMORY_VALUE_MAX_BYTES} bytes (\`MEMORY_VALUE_TOO_LARGE\`),`,
        `at most ${MEMORY_BULK_MAX_KEYS} keys per bulk write (\`MEMORY_TOO_MANY_KEYS\`), at least one (\`MEMORY_EMPTY\`),`,
        `and the values of one bulk write together at most ${MEMORY_BULK_MAX_TOTAL_BYTES} bytes (\`MEMORY_BULK_TOO_LARGE\`; one database transaction holds 4 MB).`,
        'Every limit is checked before anything is written: a refused request changes nothing.',
        'The write and a check that the agent still exists are one transaction, so an agent deleted meanwhile answers 404 and keeps no memory.',
        'Writing a key again replaces its value.',
        "Once stored, the change is pushed to the account's running instance (best effort, within 2 s), so the agent uses it from its next answer;",
        'an instance that is not running or cannot be reached reads it when it next loads its state.',
      ].join(' '),
      body: () => z.union([SingleMemoryWrite(), BulkMemoryWrite()]),
      example: { agentId: 'agt_7f3k2m9q', key: 'favourite_venue', memory: { city: 'Bristol', name: 'The Fleece' } },
      responses: () => ({
        200: z.union([
          z.object({ success: z.literal(true), agentId: z.string(), key: z.string(), saved: IsoDate() }),
          z.object({ success: z.literal(true), agentId: z.string(), keysUpdated: z.number().check(z.int()), saved: IsoDate() }),
        ]),
        404: ErrorBody(),
        409: ErrorBody().check(z.describe('the same keys were being written at the same moment; try again')),
        ...commonErrorResponses(),
        400: z.union([
          ValidationErrorBody(),
          z.looseObject({ error: z.string(), code: z.enum(MEMORY_LIMIT_CODES), limit: z.optional(z.number().check(z.int())) }),
        ]),
      }),
    },
  ],
});
