import type { FakeModelServer } from './fake-model-server';

export interface SseFrame {
  event: string;
  data: any;
}

/** The SSE frames of a body, as {event, data}. */
export const sseFramesOf = (text: string): SseFrame[] =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((f) => ({ event: /^event: (.*)$/m.exec(f)![1]!, data: JSON.parse(/^data: (.*)$/m.exec(f)![1]!) }));

/** A slow model stops waiting for the reader after this long, so a buffering server fails the test instead of hanging it. */
const GIVE_UP_MS = 3000;

/**
 * POSTs a streamed request over a real HTTP connection while the fake model holds back its last
 * chunk until the client has read its first `delta` event. Resolves with when that event arrived
 * and when the model sent its last chunk: a server that buffers makes the first arrive after the last.
 */
export async function readWhileModelIsSlow(model: FakeModelServer, url: string, init: RequestInit) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let giveUp: NodeJS.Timeout | undefined;
  model.lastChunkSentAt = undefined;
  model.beforeLastChunk = () => {
    giveUp ??= setTimeout(release, GIVE_UP_MS);
    return released;
  };
  try {
    const res = await fetch(url, init);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let firstDeltaAt: number | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (firstDeltaAt === undefined && /^event: delta$/m.test(text)) {
        firstDeltaAt = performance.now();
        release();
      }
    }
    return { res, frames: sseFramesOf(text), firstDeltaAt, lastChunkSentAt: model.lastChunkSentAt };
  } finally {
    clearTimeout(giveUp);
    model.beforeLastChunk = undefined;
  }
}

/** The text of the `delta` frames, joined (`field`: where a delta carries its piece). */
export const deltaText = (frames: SseFrame[], field = 'content') =>
  frames
    .filter((f) => f.event === 'delta')
    .map((f) => f.data[field])
    .join('');

/** True when the first delta reached the reader before the model wrote its last chunk (the answer streamed, not buffered). */
export const arrivedWhileModelWrote = (t: { firstDeltaAt?: number; lastChunkSentAt?: number }) =>
  t.firstDeltaAt !== undefined && t.lastChunkSentAt !== undefined && t.firstDeltaAt < t.lastChunkSentAt;
