import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { inheritedEnv, instanceConfig } from '#platform/config';
import { logger } from '#platform/logger';
import { type LaunchHandle, LaunchError, type Launcher, type LaunchSpec, type Located, type RuntimeLogLineInput, runtimeLineFields } from './launcher';
import { localChildSpawned } from './local-children';

/**
 * The local stack's "ECS": each instance is a child process running `runtime/server.ts` under the
 * same Node binary (process.execPath) with tsx's loader (`node --import tsx`, one process, so the
 * pid and signals are the runtime's own). tsx rather than an esbuild bundle made on the fly: the
 * stack already runs under tsx, the runtime stays plain source with no build step or output folder
 * to manage, and tsx caches its transforms, so a start costs about a second.
 *
 * The child gets only what a task would: its gateway token, the platform URL, its user id and
 * version, and a loopback port; it reports `listening <port>` on stdout. The port is derived from
 * the user id (see stablePort), so an account's websocket URL survives a restart of the stack.
 * Nothing of the platform's environment is passed on (no JWT secret, no provider keys).
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const DEFAULT_ENTRY = path.join(ROOT, 'runtime', 'server.ts');
const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5000;
/** Variables a child process needs to run at all; none of them is a platform setting. */
const PASSED_THROUGH = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'SYSTEMROOT'];

interface Running {
  child: ChildProcess;
  handle: LaunchHandle;
}

/** A runtime process that ended without `stop` asking it to (a crash, an outside kill). */
export interface LocalExit {
  userId: string;
  generation: number;
  handle: LaunchHandle;
  /** `exit code 1`, `signal SIGKILL`. */
  reason: string;
}

class LocalLauncher implements Launcher {
  readonly name = 'local' as const;
  private exitListener?: (exit: LocalExit) => void;
  /** By idempotency key: a repeated launch gets the same process. */
  private readonly launches = new Map<string, Promise<Running>>();
  private readonly byPid = new Map<string, Running>();

  async launch(spec: LaunchSpec): Promise<LaunchHandle> {
    let pending = this.launches.get(spec.idempotencyKey);
    if (pending) {
      const running = await pending.catch(() => undefined);
      if (running && running.child.exitCode === null && running.child.signalCode === null) return running.handle;
    }
    pending = this.start(spec);
    this.launches.set(spec.idempotencyKey, pending);
    pending.catch(() => this.launches.delete(spec.idempotencyKey));
    return (await pending).handle;
  }

  private async start(spec: LaunchSpec): Promise<Running> {
    const port = await stablePort(spec.userId);
    const env = inheritedEnv(PASSED_THROUGH);
    Object.assign(env, {
      GATEWAY_TOKEN: spec.gatewayToken,
      PLATFORM_URL: spec.platformUrl,
      INSTANCE_USER_ID: spec.userId,
      RUNTIME_VERSION: spec.runtimeVersion,
      RUNTIME_IMAGE: spec.image,
      HOST: '127.0.0.1',
      PORT: String(port),
    });
    const entry = instanceConfig().localRuntimeEntry ? path.resolve(instanceConfig().localRuntimeEntry!) : DEFAULT_ENTRY;
    // The plan's memory as the process's cap: V8's heap limit, and the limit the runtime reports.
    const memoryArgs = spec.memoryMiB ? [`--max-old-space-size=${spec.memoryMiB}`] : [];
    if (spec.memoryMiB) env.MEMORY_LIMIT_BYTES = String(spec.memoryMiB * 1024 * 1024);
    const child = spawn(process.execPath, [...memoryArgs, '--import', 'tsx', entry], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    localChildSpawned(child, 'runtime');
    return new Promise<Running>((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      const fail = (why: string) => {
        clearTimeout(timer);
        if (child.exitCode === null) child.kill('SIGKILL');
        reject(new LaunchError(`local runtime did not start: ${why}${stderr ? `; ${stderr.trim().slice(-500)}` : ''}`));
      };
      const timer = setTimeout(() => fail(`no port reported within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
      child.stderr!.on('data', (d: Buffer) => {
        stderr = (stderr + d.toString()).slice(-4000);
      });
      child.once('error', (err) => fail(err.message));
      child.once('exit', (code, signal) => {
        // stop() forgets a process before signalling it, so one still known here ended on its own.
        const known = this.byPid.get(String(child.pid));
        this.byPid.delete(String(child.pid));
        fail(`exited with ${signal ?? code}`);
        if (known?.child === child) {
          const reason = signal ? `signal ${signal}` : `exit code ${code}`;
          this.exitListener?.({ userId: spec.userId, generation: spec.generation, handle: known.handle, reason });
        }
      });
      child.stdout!.on('data', (d: Buffer) => {
        stdout += d.toString();
        const m = /^listening (\d+)$/m.exec(stdout);
        if (!m) return;
        clearTimeout(timer);
        child.stdout!.removeAllListeners('data');
        if (spec.keepLogLines) captureOutput(child, spec.keepLogLines);
        else child.stdout!.resume();
        const port = Number(m[1]);
        const handle: LaunchHandle = { launcher: 'local', id: String(child.pid), endpoint: `http://127.0.0.1:${port}` };
        const running = { child, handle };
        this.byPid.set(handle.id, running);
        logger().info('local instance started', { userId: spec.userId, generation: spec.generation, pid: child.pid, port });
        resolve(running);
      });
    });
  }

  async locate(handle: LaunchHandle): Promise<Located> {
    const running = this.byPid.get(handle.id);
    if (!running || running.child.exitCode !== null || running.child.signalCode !== null) return { state: 'stopped', handle, reason: 'process not running' };
    return { state: 'running', handle: running.handle };
  }

  /** Only processes this launcher started are ever signalled: a stale pid may belong to anyone. */
  async stop(handle: LaunchHandle, reason: string): Promise<void> {
    const running = this.byPid.get(handle.id);
    if (!running) return;
    this.byPid.delete(handle.id);
    logger().info('stopping local instance', { pid: handle.id, reason });
    await stopChild(running.child);
  }

  /** Told of every started instance that ends on its own, within moments of its exit (the local stand-in for ECS's STOPPED event). */
  onUnexpectedExit(listener: ((exit: LocalExit) => void) | undefined): void {
    this.exitListener = listener;
  }

  /** The local stack's shutdown: every instance it started. */
  async stopAll(): Promise<void> {
    const all = [...this.byPid.values()];
    this.byPid.clear();
    this.launches.clear();
    await Promise.all(all.map((r) => stopChild(r.child)));
  }

  /** How many instances are running (tests). */
  runningCount(): number {
    return [...this.byPid.values()].filter((r) => r.child.exitCode === null && r.child.signalCode === null).length;
  }
}

const LOG_FLUSH_MS = 250;
const LOG_FLUSH_LINES = 25;

/**
 * What ECS sends to CloudWatch, the local stack keeps itself: each line the runtime writes after
 * it started goes to `keep` (the per-agent log store). The runtime writes JSON lines ({level, message,
 * agentId?}); a line naming an agent is that agent's, others are the instance's.
 */
function captureOutput(child: ChildProcess, keep: NonNullable<LaunchSpec['keepLogLines']>) {
  let pending: RuntimeLogLineInput[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    const lines = pending;
    pending = [];
    if (lines.length) keep(lines).catch((err) => logger().warn('could not store runtime log lines', { error: String(err) }));
  };
  for (const stream of ['stdout', 'stderr'] as const) {
    createInterface({ input: child[stream]! }).on('line', (line) => {
      if (!line.trim()) return;
      pending.push({ stream, at: new Date().toISOString(), ...runtimeLineFields(line) });
      if (pending.length >= LOG_FLUSH_LINES) flush();
      else timer ??= setTimeout(flush, LOG_FLUSH_MS);
    });
  }
  child.once('exit', () => {
    if (timer) clearTimeout(timer);
    flush();
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * Below Linux's ephemeral range (32768+), so ports the system hands out for `listen(0)` and
 * outgoing connections rarely take an instance's port.
 */
const STABLE_PORT_BASE = 24_000;
const STABLE_PORT_SPAN = 8000;
const STABLE_PORT_PROBES = 16;

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * The same loopback port for an account on every launch (the websocket URLs handed to clients
 * stay valid across restarts): a hash of the user id picks the first candidate; when something
 * else holds it, the next ones are tried in order, so the choice is still the same next time.
 */
export async function stablePort(userId: string): Promise<number> {
  const first = createHash('sha256').update(userId).digest().readUInt32BE(0) % STABLE_PORT_SPAN;
  for (let i = 0; i < STABLE_PORT_PROBES; i += 1) {
    const port = STABLE_PORT_BASE + ((first + i) % STABLE_PORT_SPAN);
    if (await portIsFree(port)) return port;
  }
  throw new LaunchError(`no free local port for the instance near ${STABLE_PORT_BASE + first}`);
}

let instance: LocalLauncher | undefined;

/** One per process: the local stack (and a test worker) owns its children. */
export function localLauncher(): LocalLauncher {
  instance ??= new LocalLauncher();
  return instance;
}
