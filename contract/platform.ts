import * as z from 'zod/mini';
import { IsoDate } from './common';
import { defineGroup, lazySchema } from './route';

export const HealthLevel = lazySchema(() => z.enum(['healthy', 'degraded', 'unhealthy']));

export const HealthBody = lazySchema(() =>
  z.object({
    status: z.literal('ok'),
    health: HealthLevel(),
    timestamp: IsoDate(),
    cpu: z.object({
      usage: z.number().check(z.minimum(0), z.maximum(100), z.describe('percent of all cores, sampled over ~100 ms')),
      cores: z.int().check(z.positive()),
    }),
    memory: z.object({
      usage: z.number().check(z.minimum(0), z.maximum(100), z.describe('percent of total memory in use')),
      total: z.int().check(z.describe('bytes')),
      used: z.int().check(z.describe('bytes')),
      free: z.int().check(z.describe('bytes')),
    }),
    uptime: z.number().check(z.describe('seconds the host has been up')),
  }),
);

export const HealthFailureBody = lazySchema(() => z.object({ status: z.literal('error'), health: z.literal('unhealthy'), timestamp: IsoDate() }));

export const platformContract = defineGroup({
  group: 'platform',
  description: 'Platform health.',
  dynamoOnly: true,
  routes: [
    {
      operation: 'getHealth',
      method: 'GET',
      path: '/api/health',
      auth: 'none',
      summary: 'Host health: healthy when CPU and memory are both at or below 70%, degraded up to 85%, unhealthy above.',
      description:
        'The database is probed too (one read, its outcome reused for a few seconds): when it does not answer within its time budget the platform cannot serve anything, ' +
        'so the answer is 503 with the failure body, and load balancers and monitors see it.',
      responses: () => ({ 200: HealthBody(), 500: HealthFailureBody(), 503: HealthFailureBody() }),
    },
  ],
});
