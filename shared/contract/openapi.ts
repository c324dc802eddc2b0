import * as z from 'zod';
import type { RouteGroup } from './route';

type JsonSchema = Record<string, unknown>;

const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  return rest;
};

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 204: 'No Content', 301: 'Moved Permanently', 302: 'Found', 400: 'Bad request or validation failure',
  401: 'Missing or invalid authentication', 402: 'Payment or subscription required', 403: 'Forbidden', 404: 'Not found',
  409: 'Conflict', 410: 'Gone', 413: 'Payload too large', 415: 'Body not sent as application/json', 429: 'Too many requests', 500: 'Internal error', 501: 'Not implemented',
  502: 'Backend unavailable', 503: 'Service unavailable',
};

const ERROR_SCHEMA = { type: 'object', properties: { error: { type: 'string' }, code: { type: 'string' } }, required: ['error'] };

const SAME_ORIGIN_NOTE =
  'Cross-site requests are refused with 403 `CROSS_SITE_REQUEST`: a browser `Origin` other than the application\'s, or `Sec-Fetch-Site` other than `same-origin`/`none` (login CSRF).';

const SECURITY: Record<string, unknown[]> = {
  none: [],
  optional: [{}, { sessionCookie: [] }, { bearer: [] }],
  session: [{ sessionCookie: [] }, { bearer: [] }],
  admin: [{ sessionCookie: [] }, { bearer: [] }],
};

/** OpenAPI 3.1 from the contract: the same tables the Lambdas, CDK and the local server read. */
export function buildOpenApi(groups: readonly RouteGroup[], info: { version: string; serverUrl?: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const group of groups) {
    for (const route of group.routes) {
      const parameters: unknown[] = [];
      for (const [where, schema] of [['path', route.params], ['query', route.query]] as const) {
        if (!schema) continue;
        const js = toSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
        for (const [name, prop] of Object.entries(js.properties ?? {})) {
          parameters.push({ name, in: where, required: where === 'path' || (js.required ?? []).includes(name), schema: prop });
        }
      }
      const responses: Record<string, unknown> = {};
      for (const [status, schema] of Object.entries(route.responses)) {
        const s = Number(status);
        responses[status] = s === 204 || s === 301 || s === 302
          ? { description: STATUS_TEXT[s] ?? status }
          : { description: STATUS_TEXT[s] ?? status, content: { 'application/json': { schema: toSchema(schema, 'output') } } };
      }
      const operation: Record<string, unknown> = {
        operationId: route.operation,
        tags: [group.group],
        summary: route.summary,
        description: [route.description, route.rateLimit ? `Rate limit scope: \`${route.rateLimit}\`.` : undefined].filter(Boolean).join('\n\n') || undefined,
        deprecated: route.deprecated || undefined,
        security: SECURITY[route.auth],
        parameters: parameters.length ? parameters : undefined,
        responses,
      };
      if (route.body && !route.rawBody) {
        responses['415'] ??= { description: STATUS_TEXT[415], content: { 'application/json': { schema: ERROR_SCHEMA } } };
      }
      if (route.sameOriginOnly) {
        operation.description = [operation.description, SAME_ORIGIN_NOTE].filter(Boolean).join('\n\n');
      }
      if (route.body) {
        operation.requestBody = {
          required: true,
          content: { 'application/json': { schema: toSchema(route.body, 'input'), ...(route.example !== undefined ? { example: route.example } : {}) } },
        };
      }
      (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Hosting Platform API',
      version: info.version,
      description: 'Errors are `{error, code?}`. JSON bodies must be sent as `Content-Type: application/json` (415 `UNSUPPORTED_MEDIA_TYPE` otherwise) and may nest at most 32 levels (400 `JSON_TOO_DEEP`). Cookie-authenticated POST/PUT/PATCH/DELETE need the `x-csrf-token` header matching the `csrf_token` cookie.',
    },
    servers: info.serverUrl ? [{ url: info.serverUrl }] : undefined,
    tags: groups.map((g) => ({ name: g.group, description: g.description })),
    components: {
      securitySchemes: {
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'session' },
        bearer: { type: 'http', scheme: 'bearer', description: 'A session JWT or an `sk_` API key.' },
      },
    },
    paths,
  };
}
