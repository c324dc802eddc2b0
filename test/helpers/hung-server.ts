import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A server on loopback that accepts every connection and never answers a byte: what a hung
 * provider, RPC node or card processor looks like to its client (no refusal, no reset, no reply).
 */
export async function startHungServer() {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    // Read and drop the request, so the client's write completes and only the answer is missing.
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    /** Connections accepted so far: proof the client really called out. */
    connections: () => connections,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
