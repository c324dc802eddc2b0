import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A siteverify server on loopback speaking the Turnstile/reCAPTCHA wire format: a form POST of
 * `secret`, `response` and `remoteip`, answered `{success, "error-codes"}`. Tokens listed in
 * `validTokens` pass when the secret matches; every request is recorded.
 */
export async function startFakeBotCheck(opts: { secret: string; validTokens: string[] }) {
  const requests: { secret: string | null; response: string | null; remoteip: string | null; contentType?: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const entry = { secret: form.get('secret'), response: form.get('response'), remoteip: form.get('remoteip'), contentType: req.headers['content-type'] };
      requests.push(entry);
      const errors: string[] = [];
      if (entry.secret !== opts.secret) errors.push('invalid-input-secret');
      if (!entry.response) errors.push('missing-input-response');
      else if (!opts.validTokens.includes(entry.response)) errors.push('invalid-input-response');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: errors.length === 0, 'error-codes': errors }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/siteverify`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
