import http from 'node:http';
import { agentCache, type AgentCache } from './agents';
import { gatewayTokenCheck } from './auth';
import { chatExchange } from './chat';
import { trackConnections } from './connections';
import type { Log } from './log';
import type { PlatformClient } from './platform';
import { perAgentQueue } from './queue';
import { requestHandler } from './routes';
import { CpuSampler, processStats } from './stats';
import { attachWebsockets } from './websocket';

export { RUNTIME_SUBPROTOCOL } from './auth';
export type { LogFields } from './log';

/**
 * The reference agent runtime: one process per account, serving every agent of the account.
 * This composes its parts:
 *   auth.ts         who may call: the gateway token (header, websocket subprotocol pair or `?token=`)
 *   routes.ts       the HTTP routes (health, stats, token rotation, reload; per agent: chat-route.ts, agent-routes.ts)
 *   websocket.ts    the websocket protocol of `/agents/<agentId>`
 *   chat.ts         one exchange with the platform's model layer, whole or streamed, stored on the platform
 *   agents.ts       the agents' state fetched from the platform
 *   queue.ts        one exchange at a time per agent
 *   connections.ts, stats.ts   the open connections and the live figures of the process
 */

export interface RuntimeOptions {
  token: string;
  platform: PlatformClient;
  runtimeVersion: string;
  /** Messages of history kept per agent and sent to the model. */
  historyLimit?: number;
  /** The runtime's own log lines (see log.ts). */
  log?: Log;
}

export function createRuntime(opts: RuntimeOptions) {
  const { platform, runtimeVersion } = opts;
  const historyLimit = opts.historyLimit ?? 50;
  const log = opts.log ?? (() => undefined);
  const gate = gatewayTokenCheck(opts.token);
  const agents = agentCache(platform, historyLimit);
  const answer = chatExchange({ platform, historyLimit, log });
  const enqueue = perAgentQueue();
  const cpu = new CpuSampler();

  const server = http.createServer();
  const connections = trackConnections(server);
  const websockets = attachWebsockets(server, { gate, agents, answer, enqueue, runtimeVersion, log });
  const stats = () => processStats(cpu, connections.network());
  server.on(
    'request',
    requestHandler({ gate, agents, platform, answer, enqueue, connections, websockets: websockets.status, stats, runtimeVersion, historyLimit, log }),
  );

  return {
    server,
    /** Loads the state, retrying while the platform is unreachable; /health says `starting` until then. */
    start: (attempts = 30, pauseMs = 1000) => loadRetrying(agents, log, attempts, pauseMs),
    async close(): Promise<void> {
      cpu.stop();
      websockets.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
    isReady: agents.isReady,
  };
}

async function loadRetrying(agents: AgentCache, log: Log, attempts: number, pauseMs: number): Promise<void> {
  for (let i = 1; ; i += 1) {
    try {
      await agents.load();
      return;
    } catch (err) {
      log('loading the state from the platform failed', { level: 'WARN', attempt: i, error: (err as Error).message });
      if (i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
}
