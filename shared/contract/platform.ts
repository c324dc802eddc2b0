import * as z from 'zod';
import { defineGroup, IsoDate } from './route';

export const HealthLevel = z.enum(['healthy', 'degraded', 'unhealthy']);

export const HealthBody = z.object({
  status: z.literal('ok'),
  health: HealthLevel,
  timestamp: IsoDate,
  cpu: z.object({ usage: z.number().min(0).max(100).describe('percent of all cores, sampled over ~100 ms'), cores: z.number().int().positive() }),
  memory: z.object({
    usage: z.number().min(0).max(100).describe('percent of total memory in use'),
    total: z.number().int().describe('bytes'),
    used: z.number().int().describe('bytes'),
    free: z.number().int().describe('bytes'),
  }),
  uptime: z.number().describe('seconds the host has been up'),
});

export const HealthFailureBody = z.object({ status: z.literal('error'), health: z.literal('unhealthy'), timestamp: IsoDate });

export const platformContract = defineGroup({
  group: 'platform',
  description: 'Platform health and the OpenAPI document.',
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
      responses: { 200: HealthBody, 500: HealthFailureBody, 503: HealthFailureBody },
    },
    {
      operation: 'getOpenApi',
      method: 'GET',
      path: '/api/openapi.json',
      auth: 'none',
      summary: 'The OpenAPI 3.1 document generated from this contract.',
      responses: { 200: z.looseObject({ openapi: z.literal('3.1.0') }) },
    },
  ],
});
