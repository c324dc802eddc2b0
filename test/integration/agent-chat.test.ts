import { describe, expect, it } from 'vitest';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { call, accountSession, uniqueIp } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { arrivedWhileModelWrote, deltaText, readWhileModelIsSlow, sseFramesOf } from '../helpers/sse-timing';
import { runningAgent as runningAgentOf, subscribe, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed();

const runningAgent = (plan?: string) => runningAgentOf(bed, plan);

describe('/api/chat', () => {
  it("sends a message to the caller's running agent, which answers through the metered model layer; history pages by cursor", async () => {
    const { user, agentId } = await runningAgent();
    for (const text of ['first', 'second']) {
      const res = await call('POST', '/api/chat', { session: user, body: { agentId, message: text } });
      expect(res.status).toBe(200);
      expect(res.body.reply).toMatchObject({ role: 'assistant', content: fakeAnswerTo(text) });
      expect(res.body.message).toMatchObject({ role: 'user', content: text });
      expect(res.body.usage.totalTokens).toBeGreaterThan(0);
    }
    const usage = await tenant(user.userId).queryAll<Record<string, unknown>>(keys.modelUsagePrefix);
    expect(usage).toEqual([expect.objectContaining({ agentId, calls: 2 })]);

    const page1 = await call('GET', `/api/chat?agentId=${agentId}&limit=3`, { session: user });
    expect(page1.body.messages.map((m: { content: string }) => m.content)).toEqual([fakeAnswerTo('second'), 'second', fakeAnswerTo('first')]);
    expect(page1.body.hasMore).toBe(true);
    const page2 = await call('GET', `/api/chat?agentId=${agentId}&limit=3&before=${encodeURIComponent(page1.body.nextBefore)}`, { session: user });
    expect(page2.body).toMatchObject({ messages: [expect.objectContaining({ content: 'first' })], hasMore: false, nextBefore: null });
  });

  it("another user's agent is 404; a stopped agent is 409; a userId in the body is refused", async () => {
    const { user, agentId } = await runningAgent();
    const stranger = await accountSession();
    await subscribe(stranger.userId, 'solo');
    expect((await call('POST', '/api/chat', { session: stranger, body: { agentId, message: 'hi' } })).status).toBe(404);
    expect((await call('GET', `/api/chat?agentId=${agentId}`, { session: stranger })).status).toBe(404);
    expect((await call('POST', '/api/chat', { session: user, body: { agentId, message: 'hi', userId: stranger.userId } })).status).toBe(400);
    expect((await call('POST', `/api/instance/${user.userId}/stop`, { session: user, ip: uniqueIp() })).status).toBe(200);
    const res = await call('POST', '/api/chat', { session: user, body: { agentId, message: 'anyone there?' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('AGENT_NOT_RUNNING');
  });
});

describe('/api/chat with stream: true', () => {
  const historyOf = async (session: Awaited<ReturnType<typeof accountSession>>, agentId: string) =>
    (await call('GET', `/api/chat?agentId=${agentId}`, { session })).body.messages.map((m: { role: string; content: string }) => [m.role, m.content]);

  it('answers server-sent events relayed from the agent, then the stored exchange; stored and metered once', async () => {
    const { user, agentId } = await runningAgent();
    const res = await call('POST', '/api/chat', { session: user, body: { agentId, message: 'stream it', stream: true } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const frames = sseFramesOf(res.text!);
    expect(frames.filter((f) => f.event === 'delta').length).toBeGreaterThan(1);
    expect(deltaText(frames)).toBe(fakeAnswerTo('stream it'));
    expect(frames.at(-1)).toMatchObject({
      event: 'done',
      data: { agentId, message: { role: 'user', content: 'stream it' }, reply: { role: 'assistant', content: fakeAnswerTo('stream it') } },
    });
    expect(frames.at(-1)!.data.reply.id).not.toBe('unstored');
    expect(frames.at(-1)!.data.usage.totalTokens).toBeGreaterThan(0);
    expect(await historyOf(user, agentId)).toEqual([
      ['assistant', fakeAnswerTo('stream it')],
      ['user', 'stream it'],
    ]);
    const usage = await tenant(user.userId).queryAll<Record<string, unknown>>(keys.modelUsagePrefix);
    expect(usage).toEqual([expect.objectContaining({ agentId, calls: 1 })]);
    // Accept: text/event-stream asks the same.
    const accepted = await call('POST', '/api/chat', { session: user, body: { agentId, message: 'by header' }, headers: { accept: 'text/event-stream' } });
    expect(accepted.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(sseFramesOf(accepted.text!).at(-1)).toMatchObject({ event: 'done', data: { reply: { content: fakeAnswerTo('by header') } } });
  });

  it('over a real HTTP connection the first delta arrives before the model sent its last chunk', async () => {
    const { user, agentId } = await runningAgent();
    const read = await readWhileModelIsSlow(bed.model, `${bed.platform.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agentId, message: 'slowly please', stream: true }),
    });
    const { res, frames } = read;
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(arrivedWhileModelWrote(read), `first delta at ${read.firstDeltaAt}, last chunk at ${read.lastChunkSentAt}`).toBe(true);
    expect(deltaText(frames)).toBe(fakeAnswerTo('slowly please'));
    expect(frames.at(-1)).toMatchObject({ event: 'done', data: { reply: { content: fakeAnswerTo('slowly please') } } });
  });

  it('a model failing mid-answer ends the stream with an error event; refusals before it keep their status', async () => {
    const { user, agentId } = await runningAgent();
    bed.model.beforeLastChunk = () => Promise.reject(new Error('provider dropped the connection'));
    let res: Awaited<ReturnType<typeof call>>;
    try {
      res = await call('POST', '/api/chat', { session: user, body: { agentId, message: 'fail midway', stream: true } });
    } finally {
      bed.model.beforeLastChunk = undefined;
    }
    expect(res.status).toBe(200);
    const frames = sseFramesOf(res.text!);
    expect(frames[0]!.event).toBe('delta');
    expect(frames.at(-1)).toMatchObject({ event: 'error', data: { code: expect.any(String), error: expect.any(String) } });
    expect(frames.some((f) => f.event === 'done')).toBe(false);
    // The failed exchange keeps the question only, as without streaming.
    expect(await historyOf(user, agentId)).toEqual([['user', 'fail midway']]);

    // A spending cap the agent's model call hits is the caller's 402, before any event, as without streaming.
    expect((await call('PUT', `/api/agents/${agentId}/budget`, { session: user, body: { monthlyCapUsd: 0.000001 } })).status).toBe(200);
    const capped = await call('POST', '/api/chat', { session: user, body: { agentId, message: 'over the cap', stream: true } });
    expect(capped.status).toBe(402);
    expect(capped.body.code).toBe('BUDGET_EXCEEDED');

    const stranger = await accountSession();
    await subscribe(stranger.userId, 'solo');
    expect((await call('POST', '/api/chat', { session: stranger, body: { agentId, message: 'hi', stream: true } })).status).toBe(404);
    expect((await call('POST', `/api/instance/${user.userId}/stop`, { session: user, ip: uniqueIp() })).status).toBe(200);
    const stopped = await call('POST', '/api/chat', { session: user, body: { agentId, message: 'anyone?', stream: true } });
    expect(stopped.status).toBe(409);
    expect(stopped.body.code).toBe('AGENT_NOT_RUNNING');
  });
});
