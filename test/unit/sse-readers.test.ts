import { describe, expect, it } from 'vitest';
import { serverSentEvents } from '#contract/sse';
import { readEventStream } from '../../web/src/sse';

// Every shape the platform, the runtime and a proxy may put on the wire: comments (heartbeats), CRLF
// line ends, an id, a named event, a default-named one with data on two lines, UTF-8 beyond ASCII,
// and last an event the stream ends inside (no blank line after it).
const WIRE =
  ': heartbeat\r\n\r\n' +
  'id: 7\r\nevent: delta\r\ndata: {"content":"héllo"}\r\n\r\n' +
  'data: {"a":\ndata: 1}\n\n' +
  ': keep-alive\n' +
  'event: done\ndata:{"content":"✓ done 🚀"}\n\n' +
  'event: delta\ndata: {"content":"cut"}\n';
const BYTES = new TextEncoder().encode(WIRE);

const PLATFORM_EVENTS = [
  { event: 'delta', id: '7', data: { content: 'héllo' } },
  { event: 'message', data: { a: 1 } },
  { event: 'done', data: { content: '✓ done 🚀' } },
];
const CONSOLE_EVENTS = [
  ['delta', '{"content":"héllo"}', '7'],
  ['message', '{"a":\n1}', undefined],
  ['done', '{"content":"✓ done 🚀"}', undefined],
];

/**
 * A body delivering `bytes` cut at `cuts`, one chunk per read, then closing, or with `then: 'stay open'` waiting as a live
 * connection does, or with an Error breaking as a reset connection does. `cancel` settles with the reason the reader cancels it.
 */
function bodyOf(bytes: Uint8Array, cuts: number[] = [], then: 'close' | 'stay open' | Error = 'close') {
  let cancelled!: (reason: unknown) => void;
  const cancel = new Promise<unknown>((resolve) => {
    cancelled = resolve;
  });
  const edges = [0, ...cuts, bytes.length];
  let next = 0;
  const body = new ReadableStream<Uint8Array<ArrayBuffer>>({
    pull(controller) {
      if (next === edges.length - 1) {
        if (then === 'close') return controller.close();
        if (then instanceof Error) return controller.error(then);
        return new Promise<void>(() => undefined);
      }
      controller.enqueue(bytes.slice(edges[next], edges[next + 1]));
      next++;
    },
    cancel: (reason) => cancelled(reason),
  });
  return { body, cancel };
}

const platformRead = async (body: ReadableStream<Uint8Array>) => {
  const events = [];
  for await (const e of serverSentEvents(body)) events.push(e);
  return events;
};
const consoleRead = async (body: ReadableStream<Uint8Array<ArrayBuffer>>) => {
  const events: unknown[][] = [];
  await readEventStream(body, (...e) => events.push(e));
  return events;
};

/** Every way to cut the wire in two (through a field name, a CRLF, a multi-byte character...), then one byte per chunk. */
const SPLITS = [...Array.from({ length: BYTES.length - 1 }, (_, i) => [i + 1]), Array.from({ length: BYTES.length - 1 }, (_, i) => i + 1)];

describe('the platform and runtime reader (contract/sse.ts)', () => {
  it('reads the same events however the body is cut into chunks', async () => {
    expect(await platformRead(bodyOf(BYTES).body)).toEqual(PLATFORM_EVENTS);
    for (const cuts of SPLITS) expect(await platformRead(bodyOf(BYTES, cuts).body), `cut at ${cuts.join(',')}`).toEqual(PLATFORM_EVENTS);
  });

  it('throws on data that is not JSON, and cancels the body', async () => {
    const { body, cancel } = bodyOf(new TextEncoder().encode('event: delta\ndata: {"content":"ok"}\n\ndata: not json\n\n'), [10], 'stay open');
    const seen: unknown[] = [];
    await expect(
      (async () => {
        for await (const e of serverSentEvents(body)) seen.push(e.event);
      })(),
    ).rejects.toThrow(SyntaxError);
    expect(seen).toEqual(['delta']);
    await cancel;
  });

  it('throws when the body breaks mid-stream, after the events that came whole', async () => {
    const { body } = bodyOf(new TextEncoder().encode('event: delta\ndata: {"content":"a"}\n\nevent: del'), [], new Error('connection reset'));
    const seen: unknown[] = [];
    await expect(
      (async () => {
        for await (const e of serverSentEvents(body)) seen.push(e.data);
      })(),
    ).rejects.toThrow('connection reset');
    expect(seen).toEqual([{ content: 'a' }]);
  });

  it('cancels the body when its reader leaves early (the caller gave up on the answer)', async () => {
    let sent = 0;
    let cancelled!: () => void;
    const cancel = new Promise<void>((resolve) => {
      cancelled = resolve;
    });
    const endless = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(new TextEncoder().encode(`event: delta\ndata: {"n":${sent++}}\n\n`)),
      cancel: () => cancelled(),
    });
    for await (const e of serverSentEvents(endless)) {
      expect(e).toEqual({ event: 'delta', data: { n: 0 } });
      break;
    }
    await cancel;
  });
});

describe("the console's reader (web/src/sse.ts)", () => {
  it('reads the same events however the body is cut into chunks', async () => {
    expect(await consoleRead(bodyOf(BYTES).body)).toEqual(CONSOLE_EVENTS);
    for (const cuts of SPLITS) expect(await consoleRead(bodyOf(BYTES, cuts).body), `cut at ${cuts.join(',')}`).toEqual(CONSOLE_EVENTS);
  });

  it('rejects with the error of a handler that throws, and cancels the body', async () => {
    const { body, cancel } = bodyOf(BYTES, [40], 'stay open');
    const names: string[] = [];
    await expect(
      readEventStream(body, (name) => {
        names.push(name);
        throw new Error('bad frame');
      }),
    ).rejects.toThrow('bad frame');
    expect(names).toEqual(['delta']);
    expect(await cancel).toMatchObject({ message: 'bad frame' });
  });

  it('rejects when the body breaks mid-stream, after the events that came whole', async () => {
    const { body } = bodyOf(new TextEncoder().encode('event: delta\ndata: {"content":"a"}\n\ndata: {"con'), [], new Error('connection reset'));
    const seen: string[] = [];
    await expect(readEventStream(body, (_, data) => seen.push(data))).rejects.toThrow('connection reset');
    expect(seen).toEqual(['{"content":"a"}']);
  });
});
