import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod/mini';
import { fetchRuntimeStats, runtimeRequest, RuntimeUnreachableError } from '#adapters/launcher';
import { gatewayToken, type InstanceRecord } from '#data/instances';
import { lazySchema } from '#contract/lazy-schema';

export interface InstanceCheck {
  /** The instance answered /health at all. */
  reachable: boolean;
  /** It answered `{status: 'ok'}`. */
  healthy: boolean;
  cpu: number | null;
  memory: number | null;
}

const HEALTH_TIMEOUT_MS = 2000;
/** One failed probe may be a blip (a GC pause, a slow network hop): a second one decides. */
const RETRY_PAUSE_MS = 1000;

const percent = (v: number) => Math.round(Math.min(100, Math.max(0, v)) * 100) / 100;

async function probe(endpoint: string, token: string): Promise<Pick<InstanceCheck, 'reachable' | 'healthy'>> {
  try {
    const res = await runtimeRequest(endpoint, token, '/health', { timeoutMs: HEALTH_TIMEOUT_MS });
    return { reachable: true, healthy: res.status === 200 && (res.body as { status?: unknown } | undefined)?.status === 'ok' };
  } catch (err) {
    if (err instanceof RuntimeUnreachableError) return { reachable: false, healthy: false };
    throw err;
  }
}

/** Health of a running instance and, when it answers, its CPU and memory (percent of its limit). */
export async function checkInstance(userId: string, instance: InstanceRecord, retryPauseMs = RETRY_PAUSE_MS): Promise<InstanceCheck> {
  const endpoint = instance.handle?.endpoint;
  if (!endpoint) return { reachable: false, healthy: false, cpu: null, memory: null };
  const token = await gatewayToken(userId);
  let health = await probe(endpoint, token);
  if (!health.healthy) {
    await sleep(retryPauseMs);
    health = await probe(endpoint, token);
  }
  if (!health.healthy) return { ...health, cpu: null, memory: null };
  try {
    const stats = await fetchRuntimeStats(endpoint, token);
    return { ...health, cpu: percent(stats.cpuPercent), memory: percent((stats.memory.usedBytes / stats.memory.limitBytes) * 100) };
  } catch (err) {
    if (err instanceof RuntimeUnreachableError) return { ...health, cpu: null, memory: null };
    throw err;
  }
}

/** The runtime's websocket figures in its `GET /health` (runtime/routes.ts). */
const HealthWebsockets = lazySchema(() =>
  z.object({ websockets: z.object({ open: z.int().check(z.nonnegative()), lastChangeAt: z.nullable(z.iso.datetime()) }) }),
);

/**
 * When the instance's websockets last showed life: `now` while one is open, else when the last one
 * opened or closed; undefined when none ever did or the runtime does not tell (an older runtime,
 * no answer), so only what the platform itself recorded counts then.
 */
export async function lastWebsocketActivity(userId: string, instance: InstanceRecord, now: Date): Promise<Date | undefined> {
  const endpoint = instance.handle?.endpoint;
  if (!endpoint) return undefined;
  try {
    const res = await runtimeRequest(endpoint, await gatewayToken(userId), '/health', { timeoutMs: HEALTH_TIMEOUT_MS });
    const parsed = HealthWebsockets().safeParse(res.body);
    if (res.status !== 200 || !parsed.success) return undefined;
    const { open, lastChangeAt } = parsed.data.websockets;
    return open > 0 ? now : lastChangeAt ? new Date(lastChangeAt) : undefined;
  } catch (err) {
    if (err instanceof RuntimeUnreachableError) return undefined;
    throw err;
  }
}
