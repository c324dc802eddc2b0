import { describe, expect, it } from 'vitest';
import { chatCompletionChunks, openAiFinishReason, type CompletionPart } from '#functions/http/openai-compatible/chunks';
import { RawBody, sseFrame } from '#http/reply';

/** The chunk encoder of `POST /v1/chat/completions` with `stream: true`, frame by frame as OpenAI writes them. */

const head = { id: 'chatcmpl-1', model: 'openai/gpt-4o-mini', created: 1_700_000_000, includeUsage: false };
const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };

async function* partsOf(...parts: CompletionPart[]) {
  for (const p of parts) yield p;
}

async function framesOf(source: AsyncIterable<{ event?: string; data: unknown }>) {
  const text: string[] = [];
  for await (const e of source) text.push(sseFrame(e));
  return text;
}

const dataOf = (frame: string) => {
  expect(frame).toMatch(/^data: .*\n\n$/s);
  const raw = frame.slice('data: '.length, -2);
  return raw === '[DONE]' ? raw : JSON.parse(raw);
};

describe('the chat.completion.chunk encoder', () => {
  it('writes the role first, a chunk per text piece, the finish reason, then [DONE]; no event names, no usage unless asked', async () => {
    const frames = await framesOf(
      chatCompletionChunks(head, partsOf({ type: 'text', text: 'Hel' }, { type: 'text', text: 'lo' }, { type: 'end', finishReason: 'stop', usage })),
    );
    expect(frames.every((f) => !f.startsWith('event:'))).toBe(true);
    const data = frames.map(dataOf);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1);
    for (const c of chunks) expect(c).toMatchObject({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'openai/gpt-4o-mini' });
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hel' }, { content: 'lo' }, {}]);
    expect(chunks.map((c) => c.choices[0].finish_reason)).toEqual([null, null, null, 'stop']);
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
  });

  it('with include_usage: usage null on each chunk, then one chunk of usage and no choices before [DONE]', async () => {
    const data = (
      await framesOf(
        chatCompletionChunks({ ...head, includeUsage: true }, partsOf({ type: 'text', text: 'Hi' }, { type: 'end', finishReason: 'length', usage })),
      )
    ).map(dataOf);
    expect(data.at(-1)).toBe('[DONE]');
    const last = data.at(-2);
    expect(last).toMatchObject({ choices: [], usage });
    expect(data.at(-3).choices[0].finish_reason).toBe('length');
    for (const c of data.slice(0, -2)) expect(c.usage).toBeNull();
  });

  it('writes the tool calls with their index before the tool_calls finish', async () => {
    const toolCalls = [
      { id: 'call_1', type: 'function' as const, function: { name: 'find_venue', arguments: '{"city":"Leeds"}' } },
      { id: 'call_2', type: 'function' as const, function: { name: 'book', arguments: '{}' } },
    ];
    const data = (await framesOf(chatCompletionChunks(head, partsOf({ type: 'end', finishReason: 'tool_calls', usage, toolCalls })))).map(dataOf);
    expect(data[1].choices[0].delta.tool_calls).toEqual([
      { index: 0, ...toolCalls[0] },
      { index: 1, ...toolCalls[1] },
    ]);
    expect(data[2].choices[0]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
  });

  it('ends a stream that fails after its first frame with an OpenAI error object and no [DONE]', async () => {
    async function* failing(): AsyncGenerator<CompletionPart> {
      yield { type: 'text', text: 'Par' };
      throw Object.assign(new Error('provider broke'), { code: 'PROVIDER_ERROR' });
    }
    const data = (await framesOf(chatCompletionChunks(head, failing()))).map(dataOf);
    expect(data.at(-1)).toEqual({ error: { message: 'the model failed while streaming', type: 'server_error', code: 'provider_error', param: null } });
    expect(data).not.toContain('[DONE]');
    expect(data[1].choices[0].delta).toEqual({ content: 'Par' });
  });

  it('says a source that ends without its end part failed, instead of ending as if complete', async () => {
    const data = (await framesOf(chatCompletionChunks(head, partsOf({ type: 'text', text: 'cut' })))).map(dataOf);
    expect(data.at(-1).error.type).toBe('server_error');
    expect(data).not.toContain('[DONE]');
  });

  it('names the AI SDK finish reasons as OpenAI does', () => {
    expect(['stop', 'length', 'tool-calls', 'content-filter', 'error', 'other'].map(openAiFinishReason)).toEqual([
      'stop',
      'length',
      'tool_calls',
      'content_filter',
      'stop',
      'stop',
    ]);
  });

  it('writes a raw data line as it is and named events as before', () => {
    expect(sseFrame({ data: new RawBody('[DONE]') })).toBe('data: [DONE]\n\n');
    expect(sseFrame({ event: 'delta', data: { content: 'x' } })).toBe('event: delta\ndata: {"content":"x"}\n\n');
  });
});
