import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible model provider on loopback: `POST /v1/chat/completions` answers in the
 * chat.completion wire format. The answer is derived from the request (`fake answer to: <last
 * user message>`), so a test can tell its own exchange from any other. Requests are recorded,
 * with the Authorization header, to prove what left the platform.
 */

export interface FakeModelRequest {
  authorization: string | undefined;
  body: { model: string; messages: { role: string; content: string }[]; temperature?: number; max_tokens?: number; stream?: boolean };
}

export interface FakeModelServer {
  /** Base URL to use as MODEL_API_BASE_URL (ends in /v1). */
  baseUrl: string;
  requests: FakeModelRequest[];
  /** Answer every request with this HTTP status instead (e.g. 500), until reset to undefined. */
  failWith: number | undefined;
  close(): Promise<void>;
}

export const fakeAnswerTo = (userMessage: string) => `fake answer to: ${userMessage}`;

export async function startFakeModelServer(): Promise<FakeModelServer> {
  const fake: FakeModelServer = {
    baseUrl: '',
    requests: [],
    failWith: undefined,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return send(404, { error: { message: 'not found' } });
    let body: FakeModelRequest['body'];
    try {
      body = JSON.parse(Buffer.concat(chunks).toString());
    } catch {
      return send(400, { error: { message: 'invalid JSON' } });
    }
    fake.requests.push({ authorization: req.headers.authorization, body });
    if (fake.failWith) return send(fake.failWith, { error: { message: 'fake provider failure', type: 'server_error' } });
    const lastUser = [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const content = fakeAnswerTo(lastUser);
    send(200, {
      id: `chatcmpl-fake-${fake.requests.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: body.messages.length * 10, completion_tokens: content.length, total_tokens: body.messages.length * 10 + content.length },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}
