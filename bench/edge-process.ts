import type { AddressInfo } from 'node:net';
import { createEdgeServer } from '#edge/server';

/**
 * The edge alone in its own process for the bench (bench/edge.ts): one route, given in the
 * environment, to the stand-in runtime; answers `memory` on IPC with its process's figures, so the
 * memory per connection is the edge's and nobody else's.
 */
const route = {
  userId: 'bench',
  status: 'running' as const,
  generation: 1,
  endpoint: process.env.BENCH_EDGE_TARGET!,
  tokenHash: process.env.BENCH_EDGE_TOKEN_HASH!,
  connectionCap: Number(process.env.BENCH_EDGE_CAP ?? 2000),
};
const edge = createEdgeServer({ agentDomain: 'agents.localhost', behindLoadBalancer: false, wakeWaitMs: 0, routes: async () => route });
edge.server.listen(0, '127.0.0.1', () => process.send!({ port: (edge.server.address() as AddressInfo).port }));
process.on('message', (m: { ask: string }) => {
  if (m.ask !== 'memory') return;
  globalThis.gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  process.send!({ rss, heapUsed, websockets: edge.edge.stats().websockets });
});
process.on('SIGTERM', () => void edge.close().then(() => process.exit(0)));
