import type { Writable } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { routeKey, type RouteGroup } from '#contract/route';
import { matchRoutes } from '#contract/router';
import { allowStreaming, streamOf } from './streaming';

/**
 * The Lambda response-streaming entry of a group whose routes stream (the contract's `streams`):
 * the function behind its Function URL in `RESPONSE_STREAM` mode. API Gateway HTTP APIs buffer
 * whatever a function answers; through this entry the server-sent events go out as they come.
 */

type BufferedHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type StreamingHandler = (event: APIGatewayProxyEventV2, responseStream: Writable, context: Context) => Promise<void>;

/** The part of the nodejs22.x runtime's `awslambda` global this entry uses. */
export interface AwsLambdaStreaming {
  streamifyResponse(handler: StreamingHandler): unknown;
  HttpResponseStream: { from(stream: Writable, metadata: { statusCode: number; headers: Record<string, string>; cookies?: string[] }): Writable };
}

/** The runtime's global, when this runs in Lambda (some tools define an empty `awslambda` elsewhere). */
const runtime = () => {
  const lambda = (globalThis as { awslambda?: Partial<AwsLambdaStreaming> }).awslambda;
  return typeof lambda?.streamifyResponse === 'function' ? (lambda as AwsLambdaStreaming) : undefined;
};

const notFound = (status: number, error: string, code: string): APIGatewayProxyStructuredResultV2 => ({
  statusCode: status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify({ error, code }),
});

function write(stream: Writable, chunk: string | Buffer) {
  return new Promise<void>((resolve, reject) => stream.write(chunk, (err) => (err ? reject(err) : resolve())));
}

/**
 * Wraps a group's pipeline handler. A Function URL event has the route key `$default`, so the
 * route is resolved here from the method and path (only the group's own routes), then the event is
 * marked streamable and the answer written: the metadata prelude, then each chunk as it comes, or
 * the buffered body. Outside Lambda (no `awslambda` global) the plain function is returned.
 */
export function streamingEntry(group: RouteGroup, handler: BufferedHandler) {
  const route = matchRoutes(group.routes);
  const entry: StreamingHandler = async (incoming, responseStream, context) => {
    const lambda = runtime();
    if (!lambda) throw new Error('the response-streaming entry runs only in the Lambda nodejs runtime');
    const match = route(incoming.requestContext.http.method, incoming.rawPath);
    let result: APIGatewayProxyStructuredResultV2;
    if (!match) result = notFound(404, 'not found', 'NOT_FOUND');
    else if (match === 'method-not-allowed') result = notFound(405, 'method not allowed', 'METHOD_NOT_ALLOWED');
    else {
      const key = routeKey(match.route);
      const event: APIGatewayProxyEventV2 = {
        ...incoming,
        routeKey: key,
        pathParameters: Object.keys(match.params).length ? match.params : undefined,
        requestContext: { ...incoming.requestContext, routeKey: key },
      };
      allowStreaming(event);
      result = await handler(event, context);
    }
    const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k, String(v)]));
    const out = lambda.HttpResponseStream.from(responseStream, {
      statusCode: result.statusCode ?? 200,
      headers,
      ...(result.cookies?.length ? { cookies: result.cookies } : {}),
    });
    const chunks = streamOf(result);
    try {
      if (chunks) for await (const chunk of chunks) await write(out, chunk);
      else if (result.body !== undefined) await write(out, result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
    } finally {
      await new Promise<void>((resolve) => out.end(resolve));
    }
  };
  const lambda = runtime();
  return (lambda ? lambda.streamifyResponse(entry) : entry) as StreamingHandler;
}
