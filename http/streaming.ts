import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/**
 * Which events may be answered with a live stream, and the stream of a result. The local server
 * and the response-streaming Lambda entry mark their events; every other transport gets buffered
 * bodies. Kept out of the event itself so no client header can claim it.
 */
const streamable = new WeakSet<APIGatewayProxyEventV2>();
const streams = new WeakMap<APIGatewayProxyStructuredResultV2, AsyncIterable<string>>();

export const allowStreaming = (event: APIGatewayProxyEventV2) => void streamable.add(event);
export const canStream = (event: APIGatewayProxyEventV2) => streamable.has(event);
export function attachStream(result: APIGatewayProxyStructuredResultV2, body: AsyncIterable<string>) {
  streams.set(result, body);
  return result;
}
export const streamOf = (result: APIGatewayProxyStructuredResultV2) => streams.get(result);
