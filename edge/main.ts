import type { AddressInfo } from 'node:net';
import { config, edgeConfig } from '#platform/config';
import { logger } from '#platform/logger';
import { createEdgeServer } from './server';

/**
 * The standalone edge process (the container runs `node main.js`, a bundle of this file): listens
 * on EDGE_PORT and routes `<subdomain>.<AGENT_DOMAIN>`; SIGTERM (a deploy draining the task)
 * closes every websocket with 1012 and lets HTTP exchanges finish before it exits.
 */
async function main() {
  const { port, agentDomain } = edgeConfig();
  const edge = createEdgeServer({ agentDomain, behindLoadBalancer: config().inAws });
  await new Promise<void>((resolve, reject) => {
    edge.server.once('error', reject);
    edge.server.listen(port, resolve);
  });
  const listening = (edge.server.address() as AddressInfo).port;
  logger().info('edge listening', { service: 'agent-edge', port: listening, agentDomain });
  process.stdout.write(`listening ${listening}\n`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger().info('edge stopping', { service: 'agent-edge', signal });
    await edge.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`agent edge failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
