import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Model providers on loopback speaking the real wire formats.
 *
 * - OpenAI-compatible: `POST /v1/chat/completions` answers a chat.completion, or with `stream: true`
 *   server-sent `chat.completion.chunk`s and, when `stream_options.include_usage` is set, a last
 *   chunk with `usage` and no choices, then `data: [DONE]`; `GET /v1/models` lists models.
 * - Anthropic Messages: `POST /v1/messages` (non-streamed `message`, or the SSE events
 *   message_start … message_stop); `GET /v1/models`.
 *
 * The answer is derived from the request (`fake answer to: <last user message>`), so a test can tell
 * its own exchange from any other. Token counts are deterministic: prompt = 10 per message,
 * completion = the answer's length in characters. Requests are recorded, with the credential.
 */

export interface FakeModelRequest {
  authorization: string | undefined;
  path: string;
  body: {
    model: string;
    messages: { role: string; content: unknown }[];
    system?: unknown;
    temperature?: number;
    top_p?: number;
    max_tokens?: number;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
    tools?: unknown[];
  };
}

export interface FakeModelServer {
  /** Base URL to use as MODEL_API_BASE_URL / ANTHROPIC_BASE_URL (ends in /v1). */
  baseUrl: string;
  requests: FakeModelRequest[];
  /** Answer every request with this HTTP status instead (e.g. 500), until reset to undefined. */
  failWith: number | undefined;
  /** Never answer (to prove the caller's timeout). */
  hang: boolean;
  /** Speech requests (`/v1/audio/speech` JSON bodies, `/v1/audio/transcriptions` form fields with the file's text). */
  audioRequests: { path: string; fields: Record<string, string> }[];
  /** Answers this many requests with a tool call to the named tool first (for multi-step tests). */
  toolCall: { name: string; input: Record<string, unknown> } | undefined;
  /**
   * A streamed answer waits for this before its last text chunk (a slow model), and breaks the
   * connection instead when it rejects (a provider failing mid-stream). Unset: no pause.
   */
  beforeLastChunk: (() => Promise<void>) | undefined;
  /** When the last text chunk of the latest streamed answer was written. */
  lastChunkSentAt: number | undefined;
  close(): Promise<void>;
}

export const fakeAnswerTo = (userMessage: string) => `fake answer to: ${userMessage}`;

/** The fake's token counts for a request, as a test predicts them. */
export const fakePromptTokens = (messageCount: number) => messageCount * 10;

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && 'text' in p ? String((p as { text: unknown }).text) : '')).join('');
  return '';
};

/**
 * `port`: a fixed one (a model server's default, e.g. Ollama's 11434), which fails with a clear
 * message when something else holds it; `models`: what `GET /v1/models` lists.
 */
export async function startFakeModelServer(opts: { port?: number; models?: string[] } = {}): Promise<FakeModelServer> {
  const sockets = new Set<import('node:net').Socket>();
  const fake: FakeModelServer = {
    baseUrl: '',
    requests: [],
    failWith: undefined,
    hang: false,
    toolCall: undefined,
    beforeLastChunk: undefined,
    lastChunkSentAt: undefined,
    audioRequests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  /** Writes the answer in 8-character pieces, pausing before the last; false when the connection was broken instead. */
  const streamPieces = async (res: http.ServerResponse, content: string, write: (piece: string) => void) => {
    const pieces = content.match(/.{1,8}/gs) ?? [];
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && fake.beforeLastChunk) {
        try {
          await fake.beforeLastChunk();
        } catch {
          // What was written reaches the client first, then the connection breaks.
          await new Promise((flushed) => res.write('', flushed));
          res.destroy();
          return false;
        }
      }
      write(piece);
    }
    fake.lastChunkSentAt = performance.now();
    return true;
  };
  const server = http.createServer(async (req, res) => {
    const eachPiece = (content: string, write: (piece: string) => void) => streamPieces(res, content, write);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const anthropic = req.url === '/v1/messages';
    if (req.method === 'GET' && req.url === '/v1/models') {
      if (fake.failWith) return send(fake.failWith, { error: { message: 'fake provider failure' } });
      return send(200, { object: 'list', data: (opts.models ?? ['fake-model']).map((id) => ({ id, object: 'model', owned_by: 'fake' })) });
    }
    // OpenAI audio: speech answers audio bytes derived from the text; a transcription answers the uploaded file's text.
    if (req.method === 'POST' && req.url === '/v1/audio/speech') {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, string>;
      fake.audioRequests.push({ path: req.url, fields: body });
      if (fake.failWith) return send(fake.failWith, { error: { message: 'fake provider failure' } });
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      return res.end(Buffer.from(`fake-audio:${body.voice}:${body.input}`));
    }
    if (req.method === 'POST' && req.url === '/v1/audio/transcriptions') {
      const form = await new Request('http://fake/', {
        method: 'POST',
        headers: { 'content-type': String(req.headers['content-type']) },
        body: Buffer.concat(chunks),
      }).formData();
      const fields: Record<string, string> = {};
      for (const [k, v] of form.entries()) fields[k] = typeof v === 'string' ? v : await v.text();
      fake.audioRequests.push({ path: req.url, fields });
      if (fake.failWith) return send(fake.failWith, { error: { message: 'fake provider failure' } });
      return send(200, { text: `transcript of: ${fields.file}`, language: 'english', duration: 1.5, segments: [], words: [] });
    }
    if (req.method !== 'POST' || (req.url !== '/v1/chat/completions' && !anthropic)) return send(404, { error: { message: 'not found' } });
    let body: FakeModelRequest['body'];
    try {
      body = JSON.parse(Buffer.concat(chunks).toString());
    } catch {
      return send(400, { error: { message: 'invalid JSON' } });
    }
    const credential = anthropic ? (req.headers['x-api-key'] as string | undefined) : req.headers.authorization;
    fake.requests.push({ authorization: credential, path: req.url!, body });
    if (fake.hang) return;
    if (fake.failWith) return send(fake.failWith, { error: { message: 'fake provider failure', type: 'server_error' } });

    const lastUser = [...body.messages].reverse().find((m) => m.role === 'user');
    const content = fakeAnswerTo(textOf(lastUser?.content));
    const promptTokens = fakePromptTokens(body.messages.length);
    const completionTokens = content.length;
    const n = fake.requests.length;
    const wantsTool =
      fake.toolCall && body.tools?.length && !body.messages.some((m) => m.role === 'tool' || (anthropic && JSON.stringify(m.content).includes('tool_result')));

    if (anthropic) {
      const contentBlocks = wantsTool
        ? [{ type: 'tool_use', id: `toolu_${n}`, name: fake.toolCall!.name, input: fake.toolCall!.input }]
        : [{ type: 'text', text: content }];
      const message = {
        id: `msg_fake_${n}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: contentBlocks,
        stop_reason: wantsTool ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: promptTokens, output_tokens: completionTokens },
      };
      if (!body.stream) return send(200, message);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (type: string, data: unknown) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...(data as object) })}\n\n`);
      event('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: promptTokens, output_tokens: 1 } } });
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      if (!(await eachPiece(content, (piece) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } })))) return;
      event('content_block_stop', { index: 0 });
      event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: completionTokens } });
      event('message_stop', {});
      return res.end();
    }

    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    if (wantsTool) {
      return send(200, {
        id: `chatcmpl-fake-${n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: `call_${n}`, type: 'function', function: { name: fake.toolCall!.name, arguments: JSON.stringify(fake.toolCall!.input) } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage,
      });
    }
    if (!body.stream) {
      return send(200, {
        id: `chatcmpl-fake-${n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage,
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(
        `data: ${JSON.stringify({ id: `chatcmpl-fake-${n}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model, choices, ...extra })}\n\n`,
      );
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    if (!(await eachPiece(content, (piece) => chunk([{ index: 0, delta: { content: piece }, finish_reason: null }])))) return;
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    if (body.stream_options?.include_usage) chunk([], { usage });
    res.write('data: [DONE]\n\n');
    res.end();
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE' ? new Error(`port ${opts.port} on 127.0.0.1 is in use on this machine (a model server?): stop it to run this test`) : err,
      ),
    );
    server.listen(opts.port ?? 0, '127.0.0.1', resolve);
  });
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}
