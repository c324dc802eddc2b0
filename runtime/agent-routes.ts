import type http from 'node:http';
import type { AgentCache } from './agents';
import { json, readBody } from './http-io';
import type { Log } from './log';
import { PlatformError, type PlatformClient } from './platform';

interface AgentRouteDeps {
  agents: AgentCache;
  platform: PlatformClient;
  log: Log;
}

/** The per-agent routes other than chat: what the agent holds (credentials, skills) and memory pushes. */
export function agentRoutes({ agents, platform, log }: AgentRouteDeps) {
  return {
    /** GET /agents/<id>/credentials: the names of the credentials this process holds for the agent (never their values). */
    async credentialNames(res: http.ServerResponse, agentId: string) {
      const agent = await agents.agentFor(agentId).catch(() => undefined);
      if (!agent) return json(res, 404, { error: 'no such agent', code: 'NOT_FOUND' });
      return json(res, 200, { agentId, credentials: Object.keys(agent.credentials ?? {}).sort() });
    },

    /**
     * GET /agents/<id>/skills lists the skills this process loaded for the agent; POST
     * /agents/<id>/skills/<skill> calls one through the platform with the gateway token.
     */
    async skillRequest(req: http.IncomingMessage, res: http.ServerResponse, agentId: string, skill: string | undefined) {
      const agent = await agents.agentFor(agentId).catch(() => undefined);
      if (!agent) return json(res, 404, { error: 'no such agent', code: 'NOT_FOUND' });
      if (req.method === 'GET' && !skill) return json(res, 200, { agentId, skills: agent.skills ?? [] });
      if (req.method !== 'POST' || !skill) return json(res, 405, { error: 'method not allowed', code: 'METHOD_NOT_ALLOWED' });
      let body: unknown;
      try {
        body = JSON.parse((await readBody(req)) || '{}');
      } catch {
        return json(res, 400, { error: 'the body is not JSON', code: 'INVALID_JSON' });
      }
      try {
        return json(res, 200, await platform.skill(agentId, skill, body as Record<string, unknown>));
      } catch (err) {
        const e = err instanceof PlatformError ? err : new PlatformError('the skill call failed', 500, 'RUNTIME_ERROR');
        return json(res, e.status || 502, { error: e.message, code: e.code });
      }
    },

    /**
     * POST /agents/<id>/memory {set?, replace?, clearHistory?}: a memory change the platform stored,
     * applied to the loaded agent at once: `set` merges keys, `replace` swaps the whole memory,
     * `clearHistory` drops the conversation replayed into prompts (404 for an agent not loaded: it loads fresh).
     */
    async applyMemoryPush(req: http.IncomingMessage, res: http.ServerResponse, agentId: string) {
      let parsed: unknown;
      try {
        parsed = JSON.parse((await readBody(req)) || '{}');
      } catch {
        return json(res, 400, { error: 'the body is not JSON', code: 'INVALID_JSON' });
      }
      const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
      if (!isMap(parsed)) return json(res, 400, { error: 'send an object {set?, replace?, clearHistory?}', code: 'BAD_CHANGE' });
      const change: { set?: unknown; replace?: unknown; clearHistory?: unknown } = parsed;
      if ((change.set !== undefined && !isMap(change.set)) || (change.replace !== undefined && !isMap(change.replace)))
        return json(res, 400, { error: 'set and replace must be objects', code: 'BAD_CHANGE' });
      const agent = agents.loaded(agentId);
      if (!agent) return json(res, 404, { error: 'agent not loaded', code: 'NOT_FOUND' });
      // Object.fromEntries defines own properties, so a key such as `__proto__` stays a plain key.
      const base = change.replace !== undefined ? Object.entries(change.replace) : Object.entries(agent.memory);
      agent.memory = Object.fromEntries([...base, ...Object.entries(change.set ?? {})]);
      if (change.clearHistory === true) agent.messages = [];
      log('memory change applied', { agentId, keys: Object.keys(agent.memory).length, historyCleared: change.clearHistory === true });
      return json(res, 200, { success: true, agentId, keys: Object.keys(agent.memory).length, messages: agent.messages.length });
    },
  };
}
