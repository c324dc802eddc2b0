import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { STUCK_PROVISIONING_MS } from '#functions/workers/heartbeat/five-minute';
import { handler as heartbeat } from '#functions/workers/heartbeat/handler';
import { reloadConfig } from '#platform/config';
import { countStuckInProvisioning, ensureInstance, settleLaunch, transitionInstance } from '#data/instances';
import { emitMetrics, METRICS_NAMESPACE, METRICS_SERVICE, onMetrics, PLATFORM_METRICS, type EmfDocument } from '#platform/metrics';
import { isolatedTable } from './metrics-helpers';

afterEach(() => {
  reloadConfig({ STAGE: 'test' });
});

/**
 * Instances that entered `provisioning` at exactly `at`: the difference of two counts a millisecond
 * apart, so launches other test files run on the shared table never enter the figure.
 */
/** What `run` writes to stdout, kept from the real stream. */
function stdoutOf(run: () => void): string[] {
  const lines: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => lines.push(String(chunk)) > 0) as typeof process.stdout.write;
  try {
    run();
  } finally {
    process.stdout.write = write;
  }
  return lines;
}

const enteredAt = async (at: Date) => (await countStuckInProvisioning(new Date(at.getTime() + 1))) - (await countStuckInProvisioning(at));

describe('business metrics (EMF)', () => {
  it('in AWS, writes one EMF document per emit to stdout, in the namespace and dimension the dashboard reads', () => {
    reloadConfig({ STAGE: 'aws' });
    const lines = stdoutOf(() => {
      emitMetrics({ [PLATFORM_METRICS.launches]: 1, [PLATFORM_METRICS.provisionsSucceeded]: 2 });
      emitMetrics({});
    });
    expect(lines).toHaveLength(1);
    const emf = JSON.parse(lines[0]!);
    expect(emf._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: METRICS_NAMESPACE,
        Dimensions: [['service']],
        Metrics: [
          { Name: 'InstanceLaunches', Unit: 'Count' },
          { Name: 'ProvisionsSucceeded', Unit: 'Count' },
        ],
      },
    ]);
    expect(emf).toMatchObject({ service: METRICS_SERVICE, InstanceLaunches: 1, ProvisionsSucceeded: 2 });
    expect(Math.abs(emf._aws.Timestamp - Date.now())).toBeLessThan(60_000);
  });

  it('outside AWS, writes nothing to stdout (listeners still receive the document)', () => {
    const seen: EmfDocument[] = [];
    const stop = onMetrics((emf) => seen.push(emf));
    const lines = stdoutOf(() => emitMetrics({ [PLATFORM_METRICS.launches]: 1 }));
    stop();
    expect(lines).toEqual([]);
    expect(seen).toHaveLength(1);
  });
});

describe('instances stuck in provisioning', () => {
  it('lists an instance exactly while it is in provisioning, by when it entered it', async () => {
    const userId = `u_stuck_${randomUUID()}`;
    const entered = new Date(Date.UTC(2001, 0, 1, 0, 0, 0, Math.floor(Math.random() * 86_400_000)));
    await ensureInstance(userId, { ownerEmail: 'stuck@example.com', image: 'img', runtimeVersion: '1.0.0', jobOwner: 'job-1' }, entered);
    expect(await enteredAt(entered)).toBe(1);

    await settleLaunch(userId, 1, { status: 'error', reason: 'never healthy' });
    expect(await enteredAt(entered)).toBe(0);

    // A relaunch enters provisioning again: listed under its new time.
    await transitionInstance(userId, 'launch', { jobOwner: () => 'job-2' });
    expect(await enteredAt(entered)).toBe(0);
    expect(await countStuckInProvisioning(new Date(Date.now() + 60_000))).toBeGreaterThanOrEqual(1);
    await settleLaunch(userId, 2, { status: 'running', set: {} });
  });

  it('the heartbeat emits the stuck count (zero included) with its check results on every run', async () => {
    // A table of its own: the heartbeat is on by default, so the shared table holds every launched test account's due checks.
    const table = await isolatedTable();
    onTestFinished(() => table.drop());
    const userId = `u_stuck_${randomUUID()}`;
    await ensureInstance(
      userId,
      { ownerEmail: 'stuck@example.com', image: 'img', runtimeVersion: '1.0.0', jobOwner: 'job-1' },
      new Date(Date.now() - STUCK_PROVISIONING_MS - 60_000),
    );
    const seen: EmfDocument[] = [];
    const stop = onMetrics((emf) => seen.push(emf));
    try {
      await heartbeat();
    } finally {
      stop();
    }
    expect(seen).toHaveLength(1);
    const emf = seen[0]!;
    expect(emf._aws.CloudWatchMetrics[0]!.Metrics.map((m) => m.Name).sort()).toEqual([
      'HeartbeatHealthy',
      'HeartbeatUnhealthy',
      'InstancesStuckInProvisioning',
    ]);
    expect(emf.InstancesStuckInProvisioning).toBeGreaterThanOrEqual(1);
  });
});
