import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A webhook receiver on loopback: records every POST (headers and raw body, as a real receiver
 * needs them to verify the signature) and answers `status` (settable, to play a failing endpoint).
 */
export async function startWebhookReceiver(opts: { status?: number } = {}) {
  const received: ReceivedWebhook[] = [];
  const state = { status: opts.status ?? 204 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = state.status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    setStatus: (status: number) => {
      state.status = status;
    },
    close,
    /** An outage: the port refuses connections until `up()`. */
    down: close,
    /** Back on the same port, so the registered URL works again. */
    up: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
  };
}
