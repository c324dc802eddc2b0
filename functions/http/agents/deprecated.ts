import { runtimeRequest, RuntimeUnreachableError } from '#adapters/launcher';
import type { AuthContext } from '#domain/auth/authenticate';
import { AGENTS_DEPRECATED_SINCE, AGENTS_SUNSET } from '#contract/agents';
import { deleteAgent, deleteAgentOwnedItems, getAgent } from '#data/agents';
import { gatewayToken, getInstance } from '#data/instances';
import { notFound } from '#platform/errors';
import { logger } from '#http/logger';

/** RFC 9745 / RFC 8594 headers of every answer of a deprecated operation, pointing at its successor. */
export const deprecationHeaders = (successorPath: string): Record<string, string> => ({
  deprecation: `@${Date.parse(AGENTS_DEPRECATED_SINCE) / 1000}`,
  sunset: new Date(AGENTS_SUNSET).toUTCString(),
  link: `<${successorPath}>; rel="successor-version"`,
});

const DELETE_ATTEMPTS = 5;

/**
 * `DELETE /api/agents/{id}`: the agent leaves the account (quota and counters in one transaction,
 * re-read when the instance moved meanwhile), then what it owned is deleted and a running
 * instance reloads so it stops serving it (best effort: it drops the agent at its next start anyway).
 */
export async function removeAgent(auth: AuthContext, agentId: string) {
  for (let attempt = 0; attempt < DELETE_ATTEMPTS; attempt += 1) {
    const [agent, instance] = await Promise.all([getAgent(auth.userId, agentId, true), getInstance(auth.userId, true)]);
    if (!agent) throw notFound('agent not found');
    if (!(await deleteAgent(auth.userId, agent, instance?.status))) continue;
    await deleteAgentOwnedItems(auth.userId, agentId);
    if (instance?.status === 'running' && instance.handle?.endpoint) await reloadQuietly(auth.userId, instance.handle.endpoint);
    return { success: true as const, id: agentId, deleted: true as const };
  }
  throw new Error('the agent kept changing while it was being deleted');
}

async function reloadQuietly(userId: string, endpoint: string) {
  try {
    await runtimeRequest(endpoint, await gatewayToken(userId), '/reload', { method: 'POST', timeoutMs: 5000 });
  } catch (err) {
    if (!(err instanceof RuntimeUnreachableError)) throw err;
    logger().warn('agent deleted; the running instance could not be told', { error: err.message });
  }
}
