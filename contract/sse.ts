/**
 * Server-sent events as the platform and the runtime read them: the runtime reads the platform's
 * streamed completions (runtime/platform.ts), the platform reads the runtime's streamed chat
 * (adapters/launcher.ts). Parsed by eventsource-parser, the same parser the console wraps in
 * web/src/sse.ts, so every reader of the product follows the one specification.
 */
import { type EventSourceMessage, EventSourceParserStream } from 'eventsource-parser/stream';

/** One event: its name (`message` when the server named none), its id when it sent one, and its data parsed as JSON. */
export interface ServerSentEvent {
  event: string;
  id?: string;
  data: unknown;
}

/**
 * The events of a response body as they arrive. An event the stream ends inside (no blank line
 * after it) was never sent whole and is dropped, as browsers drop it; comments yield nothing.
 * Data that is not JSON, or a body that breaks, throws; leaving the loop early cancels the body.
 */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const messages = body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const message of messages as unknown as AsyncIterable<EventSourceMessage>) {
    yield {
      event: message.event ?? 'message',
      ...(message.id === undefined ? {} : { id: message.id }),
      data: message.data ? JSON.parse(message.data) : undefined,
    };
  }
}
