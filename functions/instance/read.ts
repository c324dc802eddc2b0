import { fetchRuntimeStats, formatMemory, formatPercent, RuntimeUnreachableError } from '../../shared/adapters/launcher';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_WAIT_SECONDS } from '../../shared/contract/instance';
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

/** First pause between reads of a wait, growing by half each time up to the longest. */
const FIRST_WAIT_PAUSE_MS = 250;
const LONGEST_WAIT_PAUSE_MS = 2000;

/**
 * Holds the request until the instance is in `status` or `timeoutSeconds` pass. The instance item
 * is the one place its status lives (written by whichever Lambda settles a launch), so the wait
 * re-reads it, consistently, with a growing pause: a status reached early is seen within a
 * quarter second, and a long wait costs about fifteen reads, not a busy loop.
 */
async function waitForStatus(userId: string, status: string, timeoutSeconds: number): Promise<{ instance: InstanceRecord; reached: boolean }> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let pause = FIRST_WAIT_PAUSE_MS;
  for (;;) {
    const instance = await getInstance(userId, true);
    const left = deadline - Date.now();
    // Right after the first provision the provisioner has not written the instance yet: keep waiting.
    if (!instance && left <= 0) throw notFound('this account has no instance yet: provision an agent first');
    if (instance && (instance.status === status || left <= 0)) return { instance, reached: instance.status === status };
    await sleep(Math.min(pause, left));
    pause = Math.min(pause * 1.5, LONGEST_WAIT_PAUSE_MS);
  }
}

export async function readInstance(auth: AuthContext, userId: string, wait: { waitFor?: string; timeout?: number } = {}) {
  requireOwner(auth, userId);
  let reached: boolean | undefined;
  let instance: InstanceRecord;
  if (wait.waitFor) ({ instance, reached } = await waitForStatus(auth.userId, wait.waitFor, wait.timeout ?? MAX_WAIT_SECONDS));
  else instance = await ownInstance(auth, userId);
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
    if (err instanceof RuntimeUnreachableError) throw new HttpError(502, 'the instance does not answer', 'BACKEND_UNAVAILABLE');
    throw err;
  }
}

/** Exactly the token the instance checks (created, and stored encrypted, when none exists yet). */
export async function readInstanceToken(auth: AuthContext, userId: string) {
  requireOwner(auth, userId);
  return { token: await gatewayToken(auth.userId) };
}
