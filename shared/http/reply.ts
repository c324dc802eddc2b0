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
