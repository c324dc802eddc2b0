import * as z from 'zod/mini';
import { isLazySchema, schemasOf, takesUserCredential, type RouteDefinition, type RouteGroup } from './route';

type JsonSchema = Record<string, unknown>;

/**
 * The resources a client developer looks for by name, under the names they expect. Every other
 * exported object schema of the contract keeps its export name (see `nameContractSchemas`).
 */
const RESOURCE_NAMES: Record<string, string> = {
  ErrorBody: 'Error',
  ValidationErrorBody: 'ValidationError',
  AiModelRecord: 'Model',
  InstanceRecord: 'InstanceRecord',
  InstanceView: 'Instance',
  ApiKeyRecord: 'ApiKey',
  SkillRecord: 'Skill',
  UserWallet: 'Wallet',
  AgentDetail: 'Agent',
  AgentListItem: 'AgentSummary',
  PublicUser: 'User',
};

const isObjectLike = (value: unknown): value is z.core.$ZodType =>
  value instanceof z.ZodMiniType && ['object', 'union', 'intersection'].includes((value as z.core.$ZodType)._zod.def.type);

/**
 * Gives the exported object schemas of the contract modules a component name, so the document
 * refers to `#/components/schemas/Agent` instead of repeating the agent inline in every route.
 * Names go into zod's global registry (next to the descriptions it already holds there), which is
 * what `z.toJSONSchema` reads to decide what to hoist.
 */
export function nameContractSchemas(modules: readonly Record<string, unknown>[]) {
  const taken = new Map<string, z.core.$ZodType | undefined>();
  // common.ts holds zod/mini twins of route.ts's shared bodies while groups move to zod/mini: a twin
  // exported under the same name with the same JSON Schema shares the component instead of going inline.
  // Compared without the registry (names, descriptions), and only when a name is met twice: cheap.
  const shapeOf = (schema: z.core.$ZodType) => JSON.stringify(z.toJSONSchema(schema, { unrepresentable: 'any', metadata: z.registry() }));
  for (const module of modules) {
    for (const [exportName, exported] of Object.entries(module)) {
      // A contract schema is built on first use (contract/route.ts): naming it builds it.
      const value = isLazySchema(exported) && /^[A-Z]/.test(exportName) ? exported() : exported;
      if (!isObjectLike(value) || !/^[A-Z]/.test(exportName)) continue;
      const existing = z.globalRegistry.get(value) as { id?: string } | undefined;
      if (existing?.id) {
        if (!taken.has(existing.id)) taken.set(existing.id, undefined);
        continue;
      }
      const name = RESOURCE_NAMES[exportName] ?? exportName;
      if (taken.has(name)) {
        const holder = taken.get(name);
        if (!holder || shapeOf(holder) !== shapeOf(value)) continue;
      } else taken.set(name, value);
      z.globalRegistry.add(value, { ...existing, id: name });
    }
  }
}

const COMPONENT_REF = '#/components/schemas/';

/**
 * Turns zod schemas into JSON Schemas whose shared and recursive parts live once under
 * `components.schemas`. zod puts them in a local `$defs` with `#/$defs/...` references, which point
 * nowhere once the schema is embedded in an OpenAPI document; here they are hoisted and renamed:
 * named schemas keep their name (an input variant that differs gets `Input` appended), anonymous
 * recursive ones (`z.json()` gives `__schema0`) are named after their content, so equal ones merge.
 */
class ComponentCollector {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly anonymousByShape = new Map<string, string>();

  convert(schema: z.core.$ZodType, io: 'input' | 'output'): JsonSchema {
    const {
      $schema: _dropped,
      $defs,
      ...root
    } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema & {
      $defs?: Record<string, JsonSchema>;
    };
    const renames = new Map<string, string>();
    const defs = Object.entries($defs ?? {});
    // Decide every name first: definitions refer to each other.
    for (const [local, def] of defs) renames.set(local, this.nameFor(local, def, io));
    for (const [local, def] of defs) {
      const name = renames.get(local)!;
      if (!this.schemas[name]) this.schemas[name] = rewriteRefs(def, renames) as JsonSchema;
    }
    return rewriteRefs(root, renames) as JsonSchema;
  }

  private nameFor(local: string, def: JsonSchema, io: 'input' | 'output'): string {
    if (local.startsWith('__schema')) {
      // The shape with its own name replaced, so two copies of one recursive schema compare equal.
      const shape = JSON.stringify(rewriteRefs(def, new Map([[local, '$self']])));
      let name = this.anonymousByShape.get(shape);
      if (!name) {
        name = shape === jsonValueShape() ? 'JsonValue' : `Recursive${this.anonymousByShape.size + 1}`;
        this.anonymousByShape.set(shape, name);
      }
      return name;
    }
    const existing = this.schemas[local];
    if (io === 'output' || !existing) return local;
    return JSON.stringify(existing) === JSON.stringify(def) ? local : `${local}Input`;
  }
}

function rewriteRefs(node: unknown, renames: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((item) => rewriteRefs(item, renames));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/')) {
      const local = value.slice('#/$defs/'.length);
      const renamed = renames.get(local) ?? local;
      out[key] = renamed === '$self' ? '$self' : COMPONENT_REF + renamed;
    } else {
      out[key] = rewriteRefs(value, renames);
    }
  }
  return out;
}

/** Built on first use: the API document's function builds it on its first request, not at a cold start. */
let builtJsonValueShape: string | undefined;
const jsonValueShape = () => (builtJsonValueShape ??= computeJsonValueShape());
function computeJsonValueShape() {
  const { $defs } = z.toJSONSchema(z.object({ value: z.json() }), { io: 'output' }) as { $defs: Record<string, JsonSchema> };
  const [local, def] = Object.entries($defs)[0]!;
  return JSON.stringify(rewriteRefs(def, new Map([[local, '$self']])));
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  400: 'Bad request or validation failure',
  401: 'Missing or invalid authentication',
  402: 'Payment or subscription required',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable request',
  429: 'Too many requests',
  500: 'Internal error',
  501: 'Not implemented',
  502: 'Backend unavailable',
  503: 'Service unavailable',
  504: 'Deadline exceeded',
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const SECURITY: Record<string, unknown[]> = {
  none: [],
  optional: [{}, { sessionCookie: [] }, { bearer: [] }],
  session: [{ sessionCookie: [] }, { bearer: [] }],
  admin: [{ sessionCookie: [] }, { bearer: [] }],
  // The gateway token is no user credential and no documented scheme; each runtime route's description names it.
  runtime: [],
};

/**
 * The `code` values the shared pipeline itself can answer with on a route, by status: they follow
 * from the route's auth mode, body and rate limit (http/pipeline.ts), whatever the handler does.
 */
function pipelineCodes(route: RouteDefinition): Record<number, string[]> {
  // Every route runs under the request deadline and reads the table (http/pipeline.ts).
  const codes: Record<number, string[]> = { 500: ['INTERNAL'], 503: ['BACKEND_UNAVAILABLE'], 504: ['DEADLINE_EXCEEDED'] };
  const add = (status: number, ...values: string[]) => (codes[status] ??= []).push(...values);
  if (route.body || route.bodyHandling?.kind === 'raw') add(413, 'PAYLOAD_TOO_LARGE');
  if (route.body && route.bodyHandling?.kind !== 'raw') {
    add(400, 'INVALID_JSON', 'JSON_TOO_DEEP');
    if (route.bodyHandling?.nonJsonStatus === 400) add(400, 'UNSUPPORTED_CONTENT_TYPE');
    else add(415, 'UNSUPPORTED_MEDIA_TYPE');
  }
  if (route.policy?.sameOrigin) add(403, 'CROSS_SITE_REQUEST');
  if (route.body || route.params || route.query) add(400, 'VALIDATION_ERROR');
  if (takesUserCredential(route)) {
    add(401, 'TOKEN_INVALID');
    add(500, 'AUTH_ERROR');
    if (route.auth !== 'optional') add(401, 'AUTH_REQUIRED');
    if (route.auth === 'admin') add(403, 'ADMIN_REQUIRED');
    if (UNSAFE_METHODS.has(route.method)) add(403, 'CSRF_INVALID');
  }
  if (route.rateLimit) add(429, 'RATE_LIMITED');
  if (route.policy?.idempotent) {
    add(400, 'INVALID_IDEMPOTENCY_KEY');
    add(409, 'IDEMPOTENCY_IN_PROGRESS');
    add(422, 'IDEMPOTENCY_KEY_REUSED');
  }
  return codes;
}

/** `code` constants and enums a response schema declares (the route's own failure codes). */
function declaredCodes(schema: unknown, components: Record<string, JsonSchema>): string[] {
  const found = new Set<string>();
  const visited = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (typeof record.$ref === 'string' && record.$ref.startsWith(COMPONENT_REF)) {
      const name = record.$ref.slice(COMPONENT_REF.length);
      if (!visited.has(name)) {
        visited.add(name);
        walk(components[name]);
      }
      return;
    }
    const code = (record.properties as Record<string, JsonSchema> | undefined)?.code;
    if (code) {
      if (typeof code.const === 'string') found.add(code.const);
      if (Array.isArray(code.enum)) for (const value of code.enum) if (typeof value === 'string') found.add(value);
    }
    for (const value of Object.values(record)) walk(value);
  };
  walk(schema);
  return [...found];
}

const SAME_ORIGIN_NOTE =
  "Cross-site requests are refused with 403 `CROSS_SITE_REQUEST`: a browser `Origin` other than the application's, or `Sec-Fetch-Site` other than `same-origin`/`none` (login CSRF).";

const IDEMPOTENCY_NOTE =
  'Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation, the credential that sent it (the session, or the API key) and the key, and a repeat by that credential with the same key, path and body gets that answer again (header `Idempotent-Replayed: true`) without running twice; a request with another credential runs on its own. The same key with a different path or body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key; one that answered 504 `DEADLINE_EXCEEDED` may still complete, and its retry with the same key then gets the stored answer.';

const header = (description: string, schema: JsonSchema = { type: 'string' }) => ({ description, schema });

function responsesOf(route: RouteDefinition, components: ComponentCollector) {
  const responses: Record<string, Record<string, unknown>> = {};
  const codes = pipelineCodes(route);
  const schemas: Record<number, z.core.$ZodType | undefined> = route.responses();
  const statuses = new Set([...Object.keys(schemas).map(Number), ...Object.keys(codes).map(Number)]);
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const schema = schemas[status];
    const body = schema ? components.convert(schema, 'output') : status >= 400 ? { $ref: `${COMPONENT_REF}Error` } : undefined;
    const allCodes = [...new Set([...(codes[status] ?? []), ...declaredCodes(body, components.schemas)])];
    const description = [STATUS_TEXT[status] ?? String(status), allCodes.length ? `Codes: ${allCodes.map((c) => `\`${c}\``).join(', ')}.` : '']
      .filter(Boolean)
      .join('. ');
    const response: Record<string, unknown> = { description };
    const headers: Record<string, unknown> = {};
    if (REDIRECTS.has(status)) headers.Location = header('Where the client goes next.', { type: 'string', format: 'uri-reference' });
    else if (status !== 204 && body) response.content = { 'application/json': { schema: body } };
    if (status === 429) headers['Retry-After'] = header('Seconds until the rate-limit window admits another request.', { type: 'integer' });
    if (route.setsCookies && (status < 300 || REDIRECTS.has(status))) {
      headers['Set-Cookie'] = header('The HttpOnly `session` cookie (a JWT) and the `csrf_token` cookie, or their removal.');
    }
    if (route.deprecated && status < 300) {
      headers.Deprecation = header('RFC 9745: when the operation was deprecated, as `@<epoch seconds>`.');
      headers.Sunset = header('RFC 8594: the HTTP date after which the operation may stop answering.');
      headers.Link = header('The successor operation: `<path>; rel="successor-version"`.');
    }
    headers['x-request-id'] = header('The request id, also in the server logs.');
    if (Object.keys(headers).length) response.headers = headers;
    responses[String(status)] = response;
  }
  return responses;
}

/** OpenAPI 3.1 from the contract: the same tables the Lambdas, CDK and the local server read. */
export function buildOpenApi(groups: readonly RouteGroup[], info: { version: string; serverUrl?: string }) {
  const components = new ComponentCollector();
  // The generic error body is referenced by every error answer that has no schema of its own.
  components.schemas.Error = {
    type: 'object',
    description: 'The error body of every failure: a message and, usually, a machine-readable code.',
    properties: { error: { type: 'string' }, code: { type: 'string' } },
    required: ['error'],
    additionalProperties: {},
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const group of groups) {
    for (const route of group.routes) {
      const parameters: unknown[] = [];
      for (const [where, schema] of [
        ['path', schemasOf(route).params],
        ['query', schemasOf(route).query],
      ] as const) {
        if (!schema) continue;
        const js = components.convert(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
        for (const [name, prop] of Object.entries(js.properties ?? {})) {
          const { description, ...propSchema } = prop;
          parameters.push({ name, in: where, required: where === 'path' || (js.required ?? []).includes(name), description, schema: propSchema });
        }
      }
      if (takesUserCredential(route) && UNSAFE_METHODS.has(route.method)) {
        parameters.push({
          name: 'x-csrf-token',
          in: 'header',
          required: false,
          description: 'Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key.',
          schema: { type: 'string' },
        });
      }
      if (route.policy?.idempotent) {
        parameters.push({
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: IDEMPOTENCY_NOTE,
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        });
      }
      const operation: Record<string, unknown> = {
        operationId: route.operation,
        tags: [group.group],
        summary: route.summary,
        description:
          [
            route.description,
            route.rateLimit ? `Rate limit scope: \`${route.rateLimit}\`.` : undefined,
            route.policy?.sameOrigin ? SAME_ORIGIN_NOTE : undefined,
          ]
            .filter(Boolean)
            .join('\n\n') || undefined,
        deprecated: route.deprecated || undefined,
        security: SECURITY[route.auth],
        parameters: parameters.length ? parameters : undefined,
        responses: responsesOf(route, components),
      };
      if (route.body) {
        operation.requestBody = {
          required: true,
          content: {
            'application/json': {
              schema: components.convert(schemasOf(route).body!, 'input'),
              ...(route.example !== undefined ? { example: route.example } : {}),
            },
          },
        };
      } else if (route.bodyHandling?.kind === 'raw') {
        operation.requestBody = { required: true, content: { 'application/json': { schema: {} } } };
      }
      (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Hosting Platform API',
      version: info.version,
      description:
        'Errors are `{error, code?}`. JSON bodies must be sent as `Content-Type: application/json` (415 `UNSUPPORTED_MEDIA_TYPE` otherwise) and may nest at most 64 levels (400 `JSON_TOO_DEEP`). Cookie-authenticated POST/PUT/PATCH/DELETE need the `x-csrf-token` header matching the `csrf_token` cookie. ' +
        'Request bodies are strict: unknown fields are refused with 400 `VALIDATION_ERROR`.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // Without a configured public URL the document describes the server that serves it.
    servers: [{ url: info.serverUrl ?? '/', description: info.serverUrl ? 'This deployment' : 'The server that serves this document' }],
    tags: groups.map((g) => ({ name: g.group, description: g.description })),
    components: {
      schemas: components.schemas,
      securitySchemes: {
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'session', description: 'The HttpOnly session cookie set by sign-in.' },
        bearer: { type: 'http', scheme: 'bearer', description: 'A session JWT or an `sk_` API key.' },
      },
    },
    paths,
  };
}
