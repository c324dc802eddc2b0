import { describe, expect, it } from 'vitest';
import { keys } from '../../shared/db/keys';
import { tenant } from '../../shared/db/tenant';
import { call, accountSession, uniqueIp } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
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
