import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import http from 'node:http';
import { allRoutes, routeKey, type ContractRoute } from '#contract';
import { matchRoutes } from '#contract/router';
import { allowStreaming, streamOf } from '#http/streaming';
import type { matchPage as MatchPage } from './pages';
import { originOf } from './pages';
import { withRequestLogger } from '#platform/logger';
import type { Edge } from '#edge/server';

/** Every contract route (or the given ones) as API Gateway matches them. */
export const createRouter = (routes: readonly ContractRoute[] = allRoutes) => matchRoutes(routes);

/**
 * Turns plain HTTP requests into API Gateway v2 events for the same Lambda handlers that run in
 * AWS, matching paths against the same contract CDK declares routes from.
 */

export type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const TEXT_TYPES = /^(application\/(json|[\w.+-]+\+json|x-www-form-urlencoded)|text\/)/i;

export interface EventInput {
  method: string;
  path: string;
  rawQueryString?: string;
  headers?: Record<string, string | string[] | undefined>;
  body?: Buffer | string;
  sourceIp?: string;
  route: ContractRoute;
  params: Record<string, string>;
}

/** The API Gateway HTTP API (payload v2.0) event for one request. Also used by the tests. */
export function toApiGatewayEvent(input: EventInput): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [k, v] of Object.entries(input.headers ?? {})) {
    if (v === undefined) continue;
    const name = k.toLowerCase();
    const value = Array.isArray(v) ? v.join(',') : v;
    if (name === 'cookie')
      cookies.push(
        ...value
          .split(';')
          .map((c) => c.trim())
          .filter(Boolean),
      );
    else headers[name] = value;
  }
  const query: Record<string, string> = {};
  const search = new URLSearchParams(input.rawQueryString ?? '');
  for (const key of new Set(search.keys())) query[key] = search.getAll(key).join(',');

  let body: string | undefined;
  let isBase64Encoded = false;
  if (input.body !== undefined && input.body.length > 0) {
    const buf = typeof input.body === 'string' ? Buffer.from(input.body) : input.body;
    if (!headers['content-type'] || TEXT_TYPES.test(headers['content-type'])) body = buf.toString('utf8');
    else {
      body = buf.toString('base64');
      isBase64Encoded = true;
    }
  }
  const now = Date.now();
  const requestId = crypto.randomUUID();
  const key = routeKey(input.route);
  return {
    version: '2.0',
    routeKey: key,
    rawPath: input.path,
    rawQueryString: input.rawQueryString ?? '',
    cookies: cookies.length ? cookies : undefined,
    headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    pathParameters: Object.keys(input.params).length ? input.params : undefined,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? '127.0.0.1',
      domainPrefix: 'local',
      http: { method: input.method, path: input.path, protocol: 'HTTP/1.1', sourceIp: input.sourceIp ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
      requestId,
      routeKey: key,
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    body,
    isBase64Encoded,
  };
}

export function lambdaContext(functionName: string, requestId: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

const MAX_LOCAL_BODY = 6 * 1024 * 1024; // API Gateway's own payload cap; the pipeline applies the product's.

function readBody(req: http.IncomingMessage, limit = MAX_LOCAL_BODY): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        resolve('too-large');
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

/** What of the agent edge (edge/server.ts) the local server mounts: requests for an agent's subdomain go to it. */
export type MountedEdge = Pick<Edge, 'owns' | 'handleRequest' | 'handleUpgrade'>;

/**
 * An HTTP server serving every contract route through `loadHandler(group)`, the local pages when
 * given, and, when given the edge, the agents' subdomains on the same port (by Host).
 */
export function createLocalServer(
  loadHandler: (group: string) => Promise<LambdaHandler>,
  onError: (err: unknown) => void,
  pages?: typeof MatchPage,
  edge?: MountedEdge,
) {
  const route = createRouter();
  const server = http.createServer(async (req, res) => {
    if (edge?.owns(req.headers.host)) return edge.handleRequest(req, res);
    try {
      const url = new URL(req.url ?? '/', 'http://local');
      const match = route(req.method ?? 'GET', url.pathname);
      // A contract route wins over the console's catch-all page (`/mcp` is the API's, not a client route).
      const page = match && match !== 'method-not-allowed' ? undefined : pages?.(req.method ?? 'GET', url.pathname);
      if (page) {
        const body = await readBody(req, page.maxBodyBytes);
        if (body === 'too-large') return send(res, 413, { error: 'request body too large', code: 'PAYLOAD_TOO_LARGE' });
        const answer = await page({
          url,
          body: new URLSearchParams(body.toString('utf8')),
          raw: body,
          contentType: req.headers['content-type'],
          accept: req.headers.accept,
          origin: originOf(req),
          peer: req.socket.remoteAddress,
        });
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
        return;
      }
      if (!match) return send(res, 404, { error: 'not found', code: 'NOT_FOUND' });
      if (match === 'method-not-allowed') return send(res, 405, { error: 'method not allowed', code: 'METHOD_NOT_ALLOWED' });
      const body = await readBody(req);
      if (body === 'too-large') return send(res, 413, { error: 'request body too large', code: 'PAYLOAD_TOO_LARGE' });
      const event = toApiGatewayEvent({
        method: req.method ?? 'GET',
        path: url.pathname,
        rawQueryString: url.search.slice(1),
        headers: req.headers,
        body,
        sourceIp: req.socket.remoteAddress?.replace(/^::ffff:/, ''),
        route: match.route,
        params: match.params,
      });
      allowStreaming(event);
      const handler = await loadHandler(match.route.group);
      // Requests overlap here (unlike in a Lambda container): each logs through its own child logger,
      // held until its answer (a stream included) is sent, since a streamed body still logs.
      await withRequestLogger(async () => {
        const result = await handler(event, lambdaContext(match.route.group, event.requestContext.requestId));
        const headers: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
        if (result.cookies?.length) headers['set-cookie'] = result.cookies;
        res.writeHead(result.statusCode ?? 200, headers);
        const stream = streamOf(result);
        if (stream) {
          for await (const chunk of stream) res.write(chunk);
          return res.end();
        }
        res.end(result.body === undefined ? undefined : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
      });
    } catch (err) {
      onError(err);
      if (!res.headersSent) send(res, 500, { error: 'internal error', code: 'INTERNAL' });
      else res.end();
    }
  });
  // The platform itself takes no upgrades; the agents' websockets go through the edge.
  server.on('upgrade', (req, socket, head) => {
    if (edge?.owns(req.headers.host)) return void edge.handleUpgrade(req, socket, head);
    socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  return server;
}
