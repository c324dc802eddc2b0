import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { OperationContext } from '#http/pipeline';
import { reply, StreamReply } from '#http/reply';

/**
 * One MCP message through the SDK's Streamable HTTP transport in stateless mode (no session id,
 * nothing kept between requests, so any Lambda container answers any request), its web `Response`
 * turned into the pipeline's answer: server-sent events as a StreamReply (streamed where the
 * transport streams, collected behind API Gateway), anything else as it came.
 */

async function* eventsOf(body: ReadableStream<Uint8Array>, done: () => Promise<void>) {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => void pending.push(event) });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      for (const event of pending.splice(0)) yield { event: event.event ?? 'message', data: JSON.parse(event.data) as unknown };
    }
  } finally {
    await done();
  }
}

export async function answerMcpMessage(server: McpServer, ctx: OperationContext, url: string) {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  const close = async () => {
    await transport.close();
    await server.close();
  };
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.headers)) if (value !== undefined) headers.set(name, value);
  const response = await transport.handleRequest(new Request(url, { method: 'POST', headers, body: ctx.rawBody }), { parsedBody: ctx.body });
  const type = response.headers.get('content-type') ?? '';
  if (response.body && type.startsWith('text/event-stream')) return new StreamReply(eventsOf(response.body, close));
  const text = await response.text();
  await close();
  if (!text) return reply.json(response.status, undefined);
  return reply.json(response.status, JSON.parse(text));
}
