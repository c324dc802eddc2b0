/** A handler returns a plain object for `200 JSON`, or a Reply for anything else. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
    readonly headers: Record<string, string> = {},
    readonly cookies: string[] = [],
  ) {}
}

/** A body sent as is, not as JSON (server-sent events); the handler sets its content type. */
export class RawBody {
  constructor(readonly text: string) {}
}

export const reply = {
  json: (status: number, body: unknown, headers?: Record<string, string>, cookies?: string[]) => new Reply(status, body, headers, cookies),
  created: (body: unknown) => new Reply(201, body),
  redirect: (location: string, status = 302, cookies?: string[]) => new Reply(status, undefined, { location }, cookies),
  noContent: (headers?: Record<string, string>) => new Reply(204, undefined, headers),
  text: (status: number, text: string, headers: Record<string, string>) => new Reply(status, new RawBody(text), headers),
};

/**
 * A server-sent event stream. Where the transport can stream (the local server, a Lambda function
 * URL in response-streaming mode) the events go out as they come; behind a buffering transport
 * (API Gateway HTTP APIs) the pipeline collects them into one `text/event-stream` body.
 */
/**
 * One server-sent event. Without `event` the frame has only its `data` line (OpenAI's chunks); a
 * RawBody as data is written as it is (`[DONE]`), anything else as JSON.
 */
export interface SseEvent {
  event?: string;
  data: unknown;
}

export class StreamReply {
  constructor(
    readonly events: AsyncIterable<SseEvent>,
    readonly headers: Record<string, string> = {},
  ) {}
}

export const sseFrame = (e: SseEvent) =>
  `${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${e.data instanceof RawBody ? e.data.text : JSON.stringify(e.data)}\n\n`;
