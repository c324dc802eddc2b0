import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP server on loopback that counts the TCP connections made to it, so a test can show that
 * a refused URL never reached it (0 connections), not merely that the answer was an error.
 */
export async function startCountingServer(handle: (req: IncomingMessage, res: ServerResponse) => void, host: '127.0.0.1' | '::1' = '127.0.0.1') {
  const server = createServer(handle);
  const state = { connections: 0 };
  server.on('connection', () => {
    state.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const hostPort = host === '::1' ? `[::1]:${port}` : `127.0.0.1:${port}`;
  return {
    port,
    /** `127.0.0.1:<port>` or `[::1]:<port>`, as FETCH_ALLOWED_LOOPBACK lists it. */
    hostPort,
    url: (path = '/') => `http://${hostPort}${path}`,
    connections: () => state.connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
