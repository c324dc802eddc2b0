import { describe, expect, it } from 'vitest';
import { classifyHealth, readHostVitals } from '#functions/http/platform/health';

describe('health thresholds (spec 4.10)', () => {
  it.each([
    [0, 0, 'healthy'],
    [70, 70, 'healthy'],
    [70.1, 10, 'degraded'],
    [10, 70.1, 'degraded'],
    [85, 85, 'degraded'],
    [85.1, 0, 'unhealthy'],
    [0, 85.1, 'unhealthy'],
    [100, 100, 'unhealthy'],
  ] as const)('cpu %d%% memory %d%% is %s', (cpu, memory, expected) => {
    expect(classifyHealth(cpu, memory)).toBe(expected);
  });

  it('reads real figures from the host', async () => {
    const v = await readHostVitals(20);
    expect(v.cpu.cores).toBeGreaterThan(0);
    expect(v.cpu.usage).toBeGreaterThanOrEqual(0);
    expect(v.cpu.usage).toBeLessThanOrEqual(100);
    expect(v.memory.total).toBe(v.memory.used + v.memory.free);
    expect(v.memory.usage).toBeGreaterThan(0);
    expect(v.uptime).toBeGreaterThan(0);
  });
});
