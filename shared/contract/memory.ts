import * as z from 'zod';
import { commonErrorResponses, defineGroup, ErrorBody, IsoDate } from './route';

/** Ids the platform generates are URL-safe; anything else is refused before it reaches a key. */
export const ResourceId = z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, _ or -');

export const MEMORY_VALUE_MAX_BYTES = 100 * 1024;
export const MEMORY_BULK_MAX_KEYS = 50;
export const MemoryKey = z.string().min(1).max(256);

const SingleMemoryWrite = z.strictObject({
  agentId: ResourceId,
  key: MemoryKey,
  memory: z.json().describe(`any JSON value, at most ${MEMORY_VALUE_MAX_BYTES} bytes once encoded`),
});

const BulkMemoryWrite = z.strictObject({
  agentId: ResourceId,
  memory: z.record(MemoryKey, z.json()).describe(`at most ${MEMORY_BULK_MAX_KEYS} keys, each value at most ${MEMORY_VALUE_MAX_BYTES} bytes`),
});

export const memoryContract = defineGroup({
  group: 'memory',
  description: 'Agent key-value memory (spec 4.6).',
  dynamoOnly: true,
  routes: [
    {
      operation: 'getMemory',
      method: 'GET',
      path: '/api/memory',
      auth: 'session',
      summary: "Read an owned agent's memory.",
      query: z.strictObject({ agentId: ResourceId }),
      responses: {
        200: z.object({ memory: z.record(z.string(), z.json()), agentId: z.string(), count: z.number().int(), lastUpdated: IsoDate.nullable() }),
        404: ErrorBody,
        ...commonErrorResponses,
      },
    },
    {
      operation: 'writeMemory',
      method: 'POST',
      path: '/api/memory',
      auth: 'session',
      summary: 'Write one key (`key` + `memory`) or up to 50 keys at once (`memory` object); bulk writes are all-or-nothing.',
      body: z.union([SingleMemoryWrite, BulkMemoryWrite]),
      example: { agentId: 'agt_7f3k2m9q', key: 'favourite_venue', memory: { city: 'Bristol', name: 'The Fleece' } },
      responses: {
        200: z.union([
          z.object({ success: z.literal(true), agentId: z.string(), key: z.string(), saved: IsoDate }),
          z.object({ success: z.literal(true), agentId: z.string(), keysUpdated: z.number().int(), saved: IsoDate }),
        ]),
        404: ErrorBody,
        ...commonErrorResponses,
      },
    },
  ],
});
