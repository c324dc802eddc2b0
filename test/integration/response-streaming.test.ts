import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { lambdaContext, toApiGatewayEvent } from '#local/server';
import { handler as aiHandler } from '#functions/http/ai/handler';
import { handler as gatewayHandler } from '#functions/http/gateway/handler';
import { aiContract } from '#contract/ai';
import { gatewayContract } from '#contract/gateway';
import { streamingEntry, type AwsLambdaStreaming } from '#http/response-streaming';
import { testSession, uniqueIp } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { useFakeModelProviders } from '../helpers/model-providers';
import { sseFramesOf } from '../helpers/sse-timing';
import { subscribe } from './agents-helpers';

/** The Lambda response-streaming entry, run with a stand-in for the nodejs22.x runtime's `awslambda` global. */
const models = useFakeModelProviders();

type Written = { kind: 'metadata'; metadata: { statusCode: number; headers: Record<string, string> } } | { kind: 'chunk'; text: string; at: number };

function fakeRuntime(onChunk: (text: string) => void = () => undefined) {
  const written: Written[] = [];
  const wrapped: unknown[] = [];
  const runtime: AwsLambdaStreaming = {
    streamifyResponse: (fn) => {
      wrapped.push(fn);
      return fn;
    },
    HttpResponseStream: {
      from: (stream, metadata) => {
        written.push({ kind: 'metadata', metadata });
        return stream;
      },
    },
  };
  const responseStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString('utf8');
      written.push({ kind: 'chunk', text, at: performance.now() });
      onChunk(text);
      done();
    },
  });
  (globalThis as { awslambda?: AwsLambdaStreaming }).awslambda = runtime;
  return { written, wrapped, responseStream };
}

afterEach(() => {
  delete (globalThis as { awslambda?: unknown }).awslambda;
  models.model.beforeLastChunk = undefined;
});

/** A Function URL event: payload 2.0, but the route key is always `$default` and there are no path parameters. */
function functionUrlEvent(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const event = toApiGatewayEvent({
    method,
    path,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    sourceIp: uniqueIp(),
    route: { method, path } as never,
    params: {},
  });
  return { ...event, routeKey: '$default', requestContext: { ...event.requestContext, routeKey: '$default' } };
}

const chunksOf = (written: Written[]) => written.flatMap((w) => (w.kind === 'chunk' ? [w] : []));

describe('the response-streaming Lambda entry', () => {
  it('wraps the handler with awslambda.streamifyResponse and writes the metadata, then each SSE event as the model sends it', async () => {
    const session = await testSession();
    await subscribe(session.userId, 'solo');
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A buffering entry would wait for the whole answer: the model then gives up waiting, and the timing check fails.
    let giveUp: NodeJS.Timeout | undefined;
    models.model.beforeLastChunk = () => {
      giveUp ??= setTimeout(release, 3000);
      return released;
    };
    const { written, wrapped, responseStream } = fakeRuntime((text) => {
      if (text.includes('event: delta')) release();
    });
    const entry = streamingEntry(aiContract, aiHandler);
    expect(wrapped).toEqual([entry]);

    const event = functionUrlEvent(
      'POST',
      '/api/ai/chat',
      { authorization: `Bearer ${session.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      { messages: [{ role: 'user', content: 'through the function url' }], model: 'anthropic/claude-3-5-haiku' },
    );
    await entry(event, responseStream, lambdaContext('ai', event.requestContext.requestId));
    clearTimeout(giveUp);

    expect(written[0]).toMatchObject({
      kind: 'metadata',
      metadata: { statusCode: 200, headers: { 'content-type': expect.stringMatching(/^text\/event-stream/) } },
    });
    expect(written.filter((w) => w.kind === 'metadata')).toHaveLength(1);
    const chunks = chunksOf(written);
    // One write per event: start, the deltas, done.
    const frames = chunks.map((c) => sseFramesOf(c.text));
    expect(frames.every((f) => f.length === 1)).toBe(true);
    const events = frames.map((f) => f[0]!);
    expect(events[0]!.event).toBe('start');
    expect(events.at(-1)!.event).toBe('done');
    expect(
      events
        .filter((e) => e.event === 'delta')
        .map((e) => e.data.content)
        .join(''),
    ).toBe(fakeAnswerTo('through the function url'));
    const firstDelta = chunks.find((c) => c.text.includes('event: delta'))!;
    expect(firstDelta.at).toBeLessThan(models.model.lastChunkSentAt!);
    expect(responseStream.writableEnded).toBe(true);
  });

  it('resolves path parameters from the URL and writes a buffered answer as one body', async () => {
    const { written, responseStream } = fakeRuntime();
    const entry = streamingEntry(aiContract, aiHandler);
    const event = functionUrlEvent('GET', '/api/ai/models/anthropic');
    await entry(event, responseStream, lambdaContext('ai', event.requestContext.requestId));
    expect(written[0]).toMatchObject({ kind: 'metadata', metadata: { statusCode: 200 } });
    const body = JSON.parse(
      chunksOf(written)
        .map((c) => c.text)
        .join(''),
    );
    expect(body.provider).toBe('anthropic');
    expect(body.count).toBeGreaterThan(0);
  });

  it("answers 404 for another group's path and 405 for a wrong method, never running another handler", async () => {
    for (const [method, path, status] of [
      ['GET', '/api/billing', 404],
      ['GET', '/api/v1/gateway', 405],
    ] as const) {
      const { written, responseStream } = fakeRuntime();
      const entry = streamingEntry(gatewayContract, gatewayHandler);
      const event = functionUrlEvent(method, path);
      await entry(event, responseStream, lambdaContext('gateway', event.requestContext.requestId));
      expect(written[0]).toMatchObject({ kind: 'metadata', metadata: { statusCode: status } });
    }
  });

  it('runs the whole pipeline: the gateway 402 challenge with its CORS headers', async () => {
    const { written, responseStream } = fakeRuntime();
    const entry = streamingEntry(gatewayContract, gatewayHandler);
    const event = functionUrlEvent('POST', '/api/v1/gateway', { 'content-type': 'application/json' }, { prompt: 'hi' });
    await entry(event, responseStream, lambdaContext('gateway', event.requestContext.requestId));
    expect(written[0]).toMatchObject({ kind: 'metadata', metadata: { statusCode: 402, headers: { vary: 'Origin' } } });
    expect(
      JSON.parse(
        chunksOf(written)
          .map((c) => c.text)
          .join(''),
      ),
    ).toMatchObject({ error: 'payment_required' });
  });
});
