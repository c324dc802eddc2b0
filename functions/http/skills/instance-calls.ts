import { runtimeRequest } from '#adapters/launcher';
export { authenticateRuntime } from '#domain/auth/runtime-agent';
import { ownerRights } from '#domain/auth/runtime-agent';
import { accessFrom, getSubscription, requireActiveSubscription } from '#domain/billing/entitlements';
import { getInstalledSkill } from '#data/installed-skills';
import { gatewayToken, getInstance } from '#data/instances';
import { notFound } from '#platform/errors';
import { logger } from '#http/logger';
import { runSkill } from './call';
import { catalogueName } from './marketplace';

/**
 * A running instance reloads its agents (installed skills included), as it does for a new
 * configuration. The install is stored either way: an instance that cannot be reached now loads
 * it at its next start, so this never fails the request.
 */
export async function deliverToInstance(userId: string): Promise<void> {
  const instance = await getInstance(userId);
  const endpoint = instance?.handle?.endpoint;
  if (instance?.status !== 'running' || !endpoint) return;
  try {
    const res = await runtimeRequest(endpoint, await gatewayToken(userId), '/reload', { method: 'POST', timeoutMs: 10_000 });
    if (res.status !== 200) logger().warn('the instance did not reload its skills', { status: res.status });
  } catch (err) {
    logger().warn('the instance could not be asked to reload its skills', { error: (err as Error).message });
  }
}

/**
 * An agent's runtime (authenticated by the pipeline for `params.userId`) calls a skill installed
 * (and enabled) on that agent. The gateway token outlives the subscription (an instance may still
 * run, or be restarted by hand), so the owner's active subscription is required on every call, as
 * for the runtime's A2A messages: skills act on the outside world at the platform's expense.
 */
export async function runtimeCall(params: { userId: string; agentId: string; skill: string }, requestId: string, body: unknown) {
  const name = catalogueName(params.skill);
  const [installed, rights, subscription] = await Promise.all([
    name ? getInstalledSkill(params.userId, params.agentId, name) : undefined,
    ownerRights(params.userId),
    getSubscription(params.userId),
  ]);
  if (!name || !installed?.enabled || !rights) throw notFound('the skill is not installed on this agent');
  requireActiveSubscription(accessFrom({ userId: params.userId, ...rights }, subscription));
  return runSkill(name, { userId: params.userId, agentId: params.agentId, requestId, now: new Date() }, body);
}
