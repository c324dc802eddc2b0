import * as z from 'zod/mini';
import { defineGroup } from './route';

/**
 * The OpenAPI document is generated from the whole contract, so its function bundles every group's
 * schemas and the generator: kept apart from `platform`, whose health check is what monitors and
 * load balancers call and which should stay light (bench `--only platform` measures it).
 */
export const apiDocumentContract = defineGroup({
  group: 'api-document',
  description: 'The OpenAPI document of the API.',
  dynamoOnly: true,
  routes: [
    {
      operation: 'getOpenApi',
      method: 'GET',
      path: '/api/openapi.json',
      auth: 'none',
      summary: 'The OpenAPI 3.1 document generated from this contract.',
      responses: () => ({ 200: z.looseObject({ openapi: z.literal('3.1.0') }) }),
    },
  ],
});
