import type { AddressInfo } from 'node:net';
import { matchPage } from '#local/pages';
import { createLocalServer } from '#local/server';

/** The local server's pages alone (signed file uploads and downloads, checkout pages) on loopback, no API routes. */
export async function startLocalPagesServer() {
  const server = createLocalServer(
    async () => {
      throw new Error('no API routes in this test');
    },
    () => undefined,
    matchPage,
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
