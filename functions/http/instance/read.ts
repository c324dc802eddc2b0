import { fetchRuntimeStats, formatMemory, formatPercent, RuntimeUnreachableError } from '#adapters/launcher';
import { MAX_WAIT_SECONDS } from '#contract/instance';
import type { AuthContext } from '#domain/auth/authenticate';
import { gatewayToken, getInstance, instanceUrl, type InstanceRecord } from '#data/instances';
import { notFound, upstreamFailed } from '#platform/errors';
import { waitForStatus } from '#domain/lifecycle/wait-for-status';
import { planOf, requireOwner } from './owner';

async function ownInstance(auth: AuthContext, userId: string): Promise<InstanceRecord> {
  requireOwner(auth, userId);
  const instance = await getInstance(auth.userId);
  if (!instance) throw notFound('this account has no instance yet: provision an agent first');
  return instance;
}

export async function readInstance(auth: AuthContext, userId: string, wait: { waitFor?: string; timeout?: number } = {}) {
  requireOwner(auth, userId);
  let reached: boolean | undefined;
  let instance: InstanceRecord;
  if (wait.waitFor) {
    const waited = await waitForStatus(auth.userId, wait.waitFor, (wait.timeout ?? MAX_WAIT_SECONDS) * 1000);
    if (!waited.instance) throw notFound('this account has no instance yet: provision an agent first');
    ({ instance, reached } = waited as { instance: InstanceRecord; reached: boolean });
  } else instance = await ownInstance(auth, userId);
  return {
    ...(reached === undefined ? {} : { reached }),
    userId: auth.userId,
    status: instance.status,
    startedAt: instance.startedAt ?? null,
    subdomain: instance.subdomain,
    url: instanceUrl(auth.userId),
    plan: await planOf(auth),
    runtimeVersion: instance.runtimeVersion,
    ...(instance.status === 'error' && instance.lastError ? { failureReason: instance.lastError } : {}),
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
    if (err instanceof RuntimeUnreachableError) throw upstreamFailed('the instance does not answer', 'BACKEND_UNAVAILABLE');
    throw err;
  }
}

/** Exactly the token the instance checks (created, and stored encrypted, when none exists yet). */
export async function readInstanceToken(auth: AuthContext, userId: string) {
  requireOwner(auth, userId);
  return { token: await gatewayToken(auth.userId) };
}
