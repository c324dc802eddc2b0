import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * OpenAI's image generation on loopback: `POST /v1/images/generations` answers
 * `{created, data: [{b64_json}], usage: {input_tokens, output_tokens, total_tokens}}` as the real
 * API does for gpt-image models. The image bytes are derived from the prompt (a PNG signature and
 * the prompt's SHA-256), so a test can tell exactly which bytes it should find in storage.
 */
export const FAKE_IMAGE_USAGE = { input_tokens: 50, output_tokens: 1056, total_tokens: 1106 } as const;

export const fakeImageBytes = (prompt: string) =>
  Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), createHash('sha256').update(prompt).digest()]);

export interface FakeImageRequest {
  authorization: string | undefined;
  body: { model: string; prompt: string; n?: number; size?: string; response_format?: string };
}

export async function startFakeImageServer() {
  const requests: FakeImageRequest[] = [];
  const state: { failWith?: number } = {};
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/images/generations') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
      }
      const body = JSON.parse(raw) as FakeImageRequest['body'];
      requests.push({ authorization: req.headers.authorization, body });
      if (state.failWith) {
        res.writeHead(state.failWith, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'the fake was told to fail', type: 'server_error' } }));
      }
      const data = Array.from({ length: body.n ?? 1 }, () => ({ b64_json: fakeImageBytes(body.prompt).toString('base64') }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ created: Math.floor(Date.now() / 1000), data, size: body.size, output_format: 'png', usage: FAKE_IMAGE_USAGE }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    failWith: (status: number | undefined) => {
      state.failWith = status;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
