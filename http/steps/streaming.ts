import { type SseEvent, sseFrame, type StreamReply } from '../reply';
import { attachStream, canStream } from '../streaming';
import type { ApiEvent, ApiResult } from './request-state';
import { toResult } from './result';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-store', 'x-accel-buffering': 'no' };

async function* sseText(events: AsyncIterable<SseEvent>) {
  for await (const e of events) yield sseFrame(e);
}

/** Streamed where the transport streams, else collected into one `text/event-stream` body. */
export async function streamResult(stream: StreamReply, event: ApiEvent, requestId: string): Promise<ApiResult> {
  const result = toResult(200, undefined, requestId);
  result.headers = { ...result.headers, ...SSE_HEADERS, ...stream.headers };
  if (canStream(event)) return attachStream(result, sseText(stream.events));
  let body = '';
  for await (const frame of sseText(stream.events)) body += frame;
  result.body = body;
  return result;
}
