import * as z from 'zod/mini';
import { instanceConfig } from '#platform/config';
import { serverSentEvents } from '#contract/sse';
import { lazySchema } from '#contract/lazy-schema';

/**
 * Where agent instances run: ECS Fargate tasks in AWS (launcher-ecs.ts), child processes running
 * `runtime/` in the local stack and tests (launcher-local.ts). The provisioner is the only caller
 * of `launcher()`; the HTTP functions only talk to a running instance (`runtimeRequest`), so they
 * never bundle the ECS client.
 */

/** Where a launched instance is: what the launcher needs to stop it and the platform to reach it. */
export interface LaunchHandle extends Record<string, unknown> {
  launcher: 'local' | 'ecs';
  /** Process id (local) or task ARN (ECS). */
  id: string;
  /** Base URL the platform reaches the runtime on (health, stats, reload); unknown until the task runs. */
  endpoint?: string;
}

/** One line of a runtime's output, as the local launcher captures it and the agent log keeps it. */
export interface RuntimeLogLineInput {
  stream: 'stdout' | 'stderr' | 'runtime';
  line: string;
  level?: string;
  agentId?: string;
  at?: string;
}

export interface LaunchSpec {
  userId: string;
  /** A repeated launch with the same key returns the first one's instance (ECS clientToken). */
  idempotencyKey: string;
  generation: number;
  image: string;
  runtimeVersion: string;
  /** The instance's own gateway token; the runtime accepts nothing else. */
  gatewayToken: string;
  /** Where the runtime reaches the platform API. */
  platformUrl: string;
  /**
   * Where a launcher that captures the runtime's output itself (the local one) keeps its lines;
   * in AWS the task's log driver sends them to CloudWatch instead. Given by the caller, so the
   * launchers, which every function bundle reaches, import no data layer.
   */
  keepLogLines?: (lines: RuntimeLogLineInput[]) => Promise<void>;
  /** Memory of the instance in MiB, from the account's plan at this launch (spec 2.16); the launcher's default when absent. */
  memoryMiB?: number;
}

export interface Located {
  state: 'pending' | 'running' | 'stopped';
  handle: LaunchHandle;
  reason?: string;
}

export interface Launcher {
  readonly name: 'local' | 'ecs';
  /** Starts an instance; throws LaunchError when there is no capacity or it cannot start (retried). */
  launch(spec: LaunchSpec): Promise<LaunchHandle>;
  /** Where the instance is now; fills in the endpoint once known. */
  locate(handle: LaunchHandle): Promise<Located>;
  /** Stops it; stopping one that is gone is not an error. */
  stop(handle: LaunchHandle, reason: string): Promise<void>;
}

/**
 * What a runtime output line says about itself: the runtime writes JSON lines ({level, message,
 * agentId?}); a line naming an agent is that agent's, others (and lines that are not JSON) the
 * instance's. The same whether the local launcher captured it or CloudWatch Logs kept it.
 */
export function runtimeLineFields(line: string): Pick<RuntimeLogLineInput, 'line' | 'level' | 'agentId'> {
  try {
    const parsed = JSON.parse(line) as { level?: unknown; agentId?: unknown };
    return {
      line,
      level: typeof parsed?.level === 'string' ? parsed.level : undefined,
      agentId: typeof parsed?.agentId === 'string' ? parsed.agentId : undefined,
    };
  } catch {
    return { line };
  }
}

/** The port the runtime listens on in a task (the CDK task definition maps the same). */
export const RUNTIME_PORT = 8080;

export class LaunchError extends Error {}

const nonNegative = () => z.number().check(z.nonnegative());

let override: Launcher | undefined;
let selected: Promise<Launcher> | undefined;

export function launcher(): Promise<Launcher> {
  if (override) return Promise.resolve(override);
  selected ??=
    instanceConfig().launcher === 'ecs' ? import('./launcher-ecs').then((m) => m.ecsLauncher()) : import('./launcher-local').then((m) => m.localLauncher());
  return selected;
}

/** Tests wrap the real launcher (to count launches or inject a capacity failure); undefined restores it. */
export function setLauncher(l: Launcher | undefined): void {
  override = l;
}

// --- talking to a running instance ---------------------------------------------------------------

export class RuntimeUnreachableError extends Error {}

export interface RuntimeAnswer {
  status: number;
  body: unknown;
}

/** One request to an instance's runtime with its gateway token, bounded in time. */
export async function runtimeRequest(
  endpoint: string,
  token: string,
  path: string,
  opts: { method?: 'GET' | 'POST'; body?: unknown; timeoutMs?: number } = {},
): Promise<RuntimeAnswer> {
  try {
    const res = await fetch(new URL(path, endpoint), {
      method: opts.method ?? 'GET',
      headers: { authorization: `Bearer ${token}`, ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 3000),
      redirect: 'error',
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, body };
  } catch (err) {
    throw new RuntimeUnreachableError(`instance unreachable: ${(err as Error).name}`);
  }
}

/**
 * A POST to an instance's runtime whose answer may be server-sent events (its streamed chat):
 * `events` as they arrive when it answered `text/event-stream`, else the JSON answer as
 * `runtimeRequest` gives it. The time limit covers the whole stream.
 */
export async function runtimeEventStream(
  endpoint: string,
  token: string,
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<RuntimeAnswer & { events?: AsyncIterable<{ event: string; data: unknown }> }> {
  let res: Response;
  try {
    res = await fetch(new URL(path, endpoint), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (err) {
    throw new RuntimeUnreachableError(`instance unreachable: ${(err as Error).name}`);
  }
  if (res.status === 200 && res.body && res.headers.get('content-type')?.startsWith('text/event-stream'))
    return { status: 200, body: undefined, events: serverSentEvents(res.body) };
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

/** True when the instance answers `GET /health` with `{status: 'ok'}`. */
export async function isHealthy(endpoint: string, token: string): Promise<boolean> {
  try {
    const res = await runtimeRequest(endpoint, token, '/health', { timeoutMs: 2000 });
    return res.status === 200 && (res.body as { status?: unknown })?.status === 'ok';
  } catch (err) {
    if (err instanceof RuntimeUnreachableError) return false;
    throw err;
  }
}

/** What the runtime's `GET /stats` answers (runtime/routes.ts). */
export const RuntimeStatsBody = lazySchema(() =>
  z.object({
    status: z.string(),
    runtimeVersion: z.string(),
    cpuPercent: nonNegative(),
    memory: z.object({ usedBytes: nonNegative(), limitBytes: z.number().check(z.positive()) }),
    uptimeMs: nonNegative(),
    pids: z.int().check(z.nonnegative()),
    network: z.object({ rxBytes: nonNegative(), txBytes: nonNegative() }),
  }),
);
export type RuntimeStats = z.infer<ReturnType<typeof RuntimeStatsBody>>;

/** Live figures of a running instance; RuntimeUnreachableError when it does not answer them. */
export async function fetchRuntimeStats(endpoint: string, token: string): Promise<RuntimeStats> {
  const res = await runtimeRequest(endpoint, token, '/stats', { timeoutMs: 3000 });
  const parsed = RuntimeStatsBody().safeParse(res.body);
  if (res.status !== 200 || !parsed.success) throw new RuntimeUnreachableError(`instance answered stats with ${res.status}`);
  return parsed.data;
}

const scaled = (bytes: number, base: number, units: string[]) => {
  let value = bytes;
  let unit = 0;
  while (value >= base && unit < units.length - 1) {
    value /= base;
    unit += 1;
  }
  return `${unit === 0 ? value.toFixed(0) : value.toFixed(2).replace(/\.?0+$/, '')}${units[unit]}`;
};

/** Memory the way container tools show it: `120.5MiB`. */
export const formatMemory = (bytes: number) => scaled(bytes, 1024, ['B', 'KiB', 'MiB', 'GiB', 'TiB']);
/** Network I/O the way container tools show it: `1.2kB`. */
export const formatTraffic = (bytes: number) => scaled(bytes, 1000, ['B', 'kB', 'MB', 'GB', 'TB']);
export const formatPercent = (value: number) => `${(Math.round(value * 100) / 100).toFixed(2)}%`;

export function formatUptime(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}
