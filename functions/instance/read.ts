import { fetchRuntimeStats, formatMemory, formatPercent, RuntimeUnreachableError } from '../../shared/adapters/launcher';
import type { AuthContext } from '../../shared/auth/authenticate';
import { gatewayToken, getInstance, instanceUrl, type InstanceRecord } from '../../shared/db/instances';
import { HttpError, notFound } from '../../shared/http/errors';
import { planOf, requireOwner } from './owner';

async function ownInstance(auth: AuthContext, userId: string): Promise<InstanceRecord> {
  requireOwner(auth, userId);
  const instance = await getInstance(auth.userId);
  if (!instance) throw notFound('this account has no instance yet: provision an agent first');
  return instance;
}

export async function readInstance(auth: AuthContext, userId: string) {
  const instance = await ownInstance(auth, userId);
  return {
    userId: auth.userId,
    status: instance.status,
    startedAt: instance.startedAt ?? null,
    subdomain: instance.subdomain,
    url: instanceUrl(auth.userId),
    plan: await planOf(auth),
    runtimeVersion: instance.runtimeVersion,
  };
}

/** Live CPU and memory of a running instance; an instance that is not running uses none. */
export async function readInstanceStats(auth: AuthContext, userId: string) {
  const instance = await ownInstance(auth, userId);
  const base = { userId: auth.userId, status: instance.status, plan: await planOf(auth), runtimeVersion: instance.runtimeVersion };
  const endpoint = instance.handle?.endpoint;
  if (instance.status !== 'running' || !endpoint) return { ...base, cpu: formatPercent(0), memory: formatMemory(0) };
  try {
    const stats = await fetchRuntimeStats(endpoint, await gatewayToken(auth.userId));
    return { ...base, cpu: formatPercent(stats.cpuPercent), memory: formatMemory(stats.memory.usedBytes) };
  } catch (err) {
    if (err instanceof RuntimeUnreachableError) throw new HttpError(502, 'the instance does not answer', 'BACKEND_UNAVAILABLE');
    throw err;
  }
}

/** Exactly the token the instance checks (created, and stored encrypted, when none exists yet). */
export async function readInstanceToken(auth: AuthContext, userId: string) {
  requireOwner(auth, userId);
  return { token: await gatewayToken(auth.userId) };
}
