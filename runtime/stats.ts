import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Live figures of this process, the way `docker stats` reports a container: CPU percent of one
 * core over the last sampling interval, resident memory against the cgroup limit (else the
 * machine's memory), uptime, and the number of tasks (threads) the process runs.
 */

export interface ProcessStats {
  cpuPercent: number;
  memory: { usedBytes: number; limitBytes: number };
  uptimeMs: number;
  pids: number;
  network: { rxBytes: number; txBytes: number };
}

const UNLIMITED = 2 ** 60;

function readNumber(file: string): number | undefined {
  try {
    const text = readFileSync(file, 'utf8').trim();
    const n = Number(text);
    return Number.isFinite(n) && n > 0 && n < UNLIMITED ? n : undefined;
  } catch {
    return undefined;
  }
}

/** cgroup v2, then v1, then the machine: the ceiling this process may actually use. */
export function memoryLimitBytes(env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = Number(env.MEMORY_LIMIT_BYTES);
  if (Number.isFinite(fromEnv) && fromEnv > 0) return fromEnv;
  return readNumber('/sys/fs/cgroup/memory.max') ?? readNumber('/sys/fs/cgroup/memory/memory.limit_in_bytes') ?? os.totalmem();
}

/** Threads of this process (`Threads:` of /proc/self/status), as container runtimes count pids. */
export function taskCount(): number {
  try {
    const m = /^Threads:\s+(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch {
    // not Linux: one process is what we know
  }
  return 1;
}

/** Samples CPU time every `intervalMs`; `read()` gives the share of one core used over the last interval. */
export class CpuSampler {
  private last = { usage: process.cpuUsage(), at: process.hrtime.bigint() };
  private percent = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 1000) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  sample(): number {
    const usage = process.cpuUsage();
    const at = process.hrtime.bigint();
    const cpuMicros = usage.user - this.last.usage.user + (usage.system - this.last.usage.system);
    const wallMicros = Number(at - this.last.at) / 1000;
    if (wallMicros > 0) this.percent = Math.max(0, (cpuMicros / wallMicros) * 100);
    this.last = { usage, at };
    return this.percent;
  }

  read(): number {
    return this.percent;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** The figures `GET /stats` reports: CPU, memory, uptime and pids of this process, with the network bytes given. */
export function processStats(cpu: CpuSampler, network: ProcessStats['network']): ProcessStats {
  return {
    cpuPercent: Math.round(cpu.read() * 100) / 100,
    memory: { usedBytes: process.memoryUsage().rss, limitBytes: memoryLimitBytes() },
    uptimeMs: Math.round(process.uptime() * 1000),
    pids: taskCount(),
    network,
  };
}
