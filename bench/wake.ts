import { reloadConfig } from '#platform/config';
import { getInstance } from '#data/instances';
import { countingLauncher, idleStopInstance, pumpProvisioningUntil, runningAgent, startPlatform } from '#test/integration/agents-helpers';
import { call } from '#test/helpers/api';
import { fakeAnswerTo, startFakeModelServer } from '#test/helpers/fake-model-server';
import { percentile } from './warm';

/**
 * Wake-to-first-answer: an agent on the real local runtime is idle-stopped, then a chat is
 * sent to it; the time runs from the request until its answer, which includes the launch, the
 * runtime's start and health check, and the model call (a fake provider on loopback, so the figure
 * is the platform's share). The provisioning queue is consumed the way the tests consume it
 * (pumpProvisioningUntil), polled about as often as the local stack's worker does.
 */

export const WAKE_RUNS = 5;
export const WAKE_TARGET_P50_MS = 3000;

export interface WakeResult {
  runs: number;
  samplesMs: number[];
  p50Ms: number;
  p99Ms: number;
  targetP50Ms: number;
  ok: boolean;
}

/** Runs on the emulators the warm part started; `queueUrl` is a provisioning queue nothing else reads. */
export async function measureWake(progress: (msg: string) => void, queueUrl: string): Promise<WakeResult> {
  const [platform, model] = await Promise.all([startPlatform(), startFakeModelServer()]);
  reloadConfig({
    PROVISIONING_QUEUE_URL: queueUrl,
    RUNTIME_PLATFORM_URL: platform.url,
    MODEL_API_BASE_URL: model.baseUrl,
    PROVISION_HEALTH_INTERVAL_MS: '200',
  });
  const launcher = countingLauncher();
  const bed = { queueUrl, launcher };
  try {
    progress('wake: provisioning an agent on the local runtime…');
    const { user, agentId } = await runningAgent(bed);
    const samplesMs: number[] = [];
    for (let run = 1; run <= WAKE_RUNS; run++) {
      await idleStopInstance(bed, user.userId);
      progress(`wake-to-first-answer ${run}/${WAKE_RUNS}…`);
      const message = `wake run ${run}`;
      const t0 = performance.now();
      const answer = call('POST', '/api/chat', { session: user, body: { agentId, message } });
      await pumpProvisioningUntil(queueUrl, async () => (await getInstance(user.userId, true))?.status === 'running');
      const res = await answer;
      const ms = performance.now() - t0;
      if (res.status !== 200 || res.body.reply?.content !== fakeAnswerTo(message)) {
        throw new Error(`the woken agent did not answer: ${res.status} ${res.text}`);
      }
      samplesMs.push(Math.round(ms));
    }
    const sorted = [...samplesMs].sort((a, b) => a - b);
    const p50Ms = percentile(sorted, 0.5);
    return { runs: WAKE_RUNS, samplesMs, p50Ms, p99Ms: percentile(sorted, 0.99), targetP50Ms: WAKE_TARGET_P50_MS, ok: p50Ms <= WAKE_TARGET_P50_MS };
  } finally {
    await launcher.restore();
    await Promise.all([platform.close(), model.close()]);
  }
}
