/**
 * The console's reader of server-sent events (the streamed chat). Parsed by eventsource-parser, the
 * parser the platform and the runtime read their streams with (contract/sse.ts, which the console
 * may not import), so both ends follow the one specification. Reads through `getReader`, which
 * every browser has, where async iteration of a stream is not everywhere yet.
 */
import { EventSourceParserStream } from 'eventsource-parser/stream';

/**
 * Reads a server-sent event stream, calling `onEvent` per event as it arrives (`message` when the
 * server named none) and resolving when the stream ends. An event the stream ends inside is dropped,
 * comments call nothing. A throw from `onEvent` or a broken body cancels the stream and rejects.
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array<ArrayBuffer>>,
  onEvent: (event: string, data: string, id?: string) => void,
): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) onEvent(next.value.event ?? 'message', next.value.data, next.value.id);
  } catch (err) {
    await reader.cancel(err).catch(() => undefined);
    throw err;
  }
}
