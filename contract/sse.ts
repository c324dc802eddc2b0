/**
 * Server-sent events as the platform and the runtime write them (`event: <name>` and one
 * `data: <JSON>` line per event). Also read by the platform's side of the runtime's chat stream
 * (adapters/launcher.ts), so both ends parse the one format the same way.
 */

/** Server-sent events of a response body, as they arrive: `{event, data}` with `data` parsed as JSON. */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: unknown }> {
  const decoder = new TextDecoder();
  let buffer = '';
  const frameOf = (block: string) => {
    const event = /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message';
    const data = [...block.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join('\n');
    return { event, data: data ? JSON.parse(data) : undefined };
  };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (block.trim()) yield frameOf(block);
    }
  }
  if (buffer.trim()) yield frameOf(buffer);
}
