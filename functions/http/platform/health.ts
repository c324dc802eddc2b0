import os from 'node:os';

export type HealthLevel = 'healthy' | 'degraded' | 'unhealthy';

/** Spec 4.10: healthy when both are at or below 70, degraded while both stay at or below 85. */
export function classifyHealth(cpuPercent: number, memoryPercent: number): HealthLevel {
  const worst = Math.max(cpuPercent, memoryPercent);
  if (worst <= 70) return 'healthy';
  if (worst <= 85) return 'degraded';
  return 'unhealthy';
}

export interface HostVitals {
  cpu: { usage: number; cores: number };
  memory: { usage: number; total: number; used: number; free: number };
  uptime: number;
}

const cpuTimes = () =>
  os.cpus().reduce(
    (acc, c) => {
      const t = c.times;
      acc.idle += t.idle;
      acc.total += t.user + t.nice + t.sys + t.idle + t.irq;
      return acc;
    },
    { idle: 0, total: 0 },
  );

const round1 = (n: number) => Math.round(n * 10) / 10;

/** CPU usage is measured over a short window: a single `os.cpus()` reading is a since-boot average. */
export async function readHostVitals(sampleMs = 100): Promise<HostVitals> {
  const a = cpuTimes();
  await new Promise((r) => setTimeout(r, sampleMs));
  const b = cpuTimes();
  const total = b.total - a.total;
  const usage = total > 0 ? (1 - (b.idle - a.idle) / total) * 100 : 0;
  const totalMem = os.totalmem();
  const freeMem = os.freemem();
  return {
    cpu: { usage: round1(Math.min(100, Math.max(0, usage))), cores: os.cpus().length || 1 },
    memory: { usage: round1(((totalMem - freeMem) / totalMem) * 100), total: totalMem, used: totalMem - freeMem, free: freeMem },
    uptime: Math.round(os.uptime()),
  };
}
