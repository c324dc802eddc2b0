import net from 'node:net';
import { reloadConfig } from '#platform/config';
import { resetDbClient } from '#data/client';
import { TEST_DB_REQUEST_TIMEOUT_MS } from './test-budgets';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy on loopback in front of a real emulator that can be paused: while paused it keeps
 * accepting connections, open or new, but forwards nothing either way, exactly what a stopped
 * (SIGSTOP) database process looks like to its clients. Resuming forwards what waited.
 */
export async function startPausableProxy(target: URL) {
  let paused = false;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    const pair = { client, upstream };
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on('error', close);
      s.on('close', close);
    }
    if (!paused) flow(pair);
  });
  const flow = ({ client, upstream }: { client: net.Socket; upstream: net.Socket }) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pause() {
      paused = true;
      for (const { client, upstream } of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    resume() {
      paused = false;
      for (const pair of pairs) flow(pair);
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * After a fault test: the table's real endpoint and the test budget again, and the settings the
 * test changed besides (named here) back to their defaults.
 */
export function restoreDatabase(realEndpoint: string, alsoReset: string[] = []) {
  reloadConfig({
    DYNAMODB_ENDPOINT: realEndpoint,
    DYNAMODB_CONNECT_TIMEOUT_MS: undefined,
    DYNAMODB_REQUEST_TIMEOUT_MS: TEST_DB_REQUEST_TIMEOUT_MS,
    DYNAMODB_MAX_ATTEMPTS: undefined,
    ...Object.fromEntries(alsoReset.map((k) => [k, undefined])),
  });
  resetDbClient();
}
