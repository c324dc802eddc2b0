import { setTimeout as sleep } from 'node:timers/promises';
import { getInstance, type InstanceRecord } from '#data/instances';

/** First pause between reads of a wait, growing by half each time up to the longest. */
const FIRST_WAIT_PAUSE_MS = 250;
const LONGEST_WAIT_PAUSE_MS = 2000;

/**
 * Holds the caller until the instance is in `status`, `stopWhen` says it never will, or `timeoutMs`
 * pass. The instance item is the one place its status lives (written by whichever Lambda settles a
 * launch), so the wait re-reads it, consistently, with a growing pause: a status reached early is
 * seen within a quarter second, and a long wait costs about fifteen reads, not a busy loop.
 * Undefined only when the account has no instance when the time is up.
 */
export async function waitForStatus(
  userId: string,
  status: string,
  timeoutMs: number,
  stopWhen: (instance: InstanceRecord) => boolean = () => false,
): Promise<{ instance: InstanceRecord | undefined; reached: boolean }> {
  const deadline = Date.now() + timeoutMs;
  let pause = FIRST_WAIT_PAUSE_MS;
  for (;;) {
    const instance = await getInstance(userId, true);
    const left = deadline - Date.now();
    // Right after the first provision the provisioner has not written the instance yet: keep waiting.
    if (instance && (instance.status === status || stopWhen(instance))) return { instance, reached: instance.status === status };
    if (left <= 0) return { instance, reached: false };
    await sleep(Math.min(pause, left));
    pause = Math.min(pause * 1.5, LONGEST_WAIT_PAUSE_MS);
  }
}
