import { describe, expect, it } from 'vitest';
import { handler } from '#functions/workers/provisioner/handler';
import { getInstance } from '#data/instances';
import { accountSession, call, uniqueIp, type TestSession } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { chat, drain, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed({ PROVISION_HEALTH_ATTEMPTS: '150' });

async function provisionerRuns() {
  const messages = await drain(bed.queueUrl);
  expect((await handler(sqsEvent(...messages.map((m) => sqsRecord(m))))).batchItemFailures).toEqual([]);
}

async function runningAgent() {
  const user = await accountSession();
  await subscribe(user.userId);
  const res = await call('POST', '/api/agents/provision', { session: user, body: { name: 'Memory bot' }, ip: uniqueIp() });
  expect(res.status).toBe(201);
  await provisionerRuns();
  expect((await getInstance(user.userId, true))?.status).toBe('running');
  return { user, agentId: res.body.agent.id as string };
}

async function chatWith(user: TestSession, agentId: string, content: string) {
  const { token } = (await call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() })).body;
  const { websocketUrl } = (await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent;
  return chat(`${websocketUrl}?token=${token}`, content);
}

/** What the running agent last sent the model: its system prompt and the conversation after it. */
const lastPrompt = () => {
  const [system, ...rest] = bed.model.requests.at(-1)!.body.messages;
  return { system: system!.content as string, conversation: rest.map((m) => m.content as string) };
};

describe('memory reaches a running agent at once', () => {
  it('a single and a bulk write are in the very next answer of the running instance, without a reload', async () => {
    const { user, agentId } = await runningAgent();
    await chatWith(user, agentId, 'hello');
    expect(lastPrompt().system).not.toContain('home_venue');

    const single = await call('POST', '/api/memory', { session: user, body: { agentId, key: 'home_venue', memory: 'The Fleece' } });
    expect(single.status).toBe(200);
    await chatWith(user, agentId, 'where do I play?');
    expect(lastPrompt().system).toContain('home_venue: "The Fleece"');

    const bulk = await call('POST', '/api/memory', { session: user, body: { agentId, memory: { fee: 5000, home_venue: 'Thekla' } } });
    expect(bulk.status).toBe(200);
    await chatWith(user, agentId, 'and now?');
    expect(lastPrompt().system).toContain('home_venue: "Thekla"');
    expect(lastPrompt().system).toContain('fee: 5000');
    expect(bed.launcher.launchesFor(user.userId)).toHaveLength(1);
  });

  it('reset-memory empties the running agent at once and the conversation is no longer replayed, even after the relaunch; messages stay readable', async () => {
    const { user, agentId } = await runningAgent();
    await call('POST', '/api/memory', { session: user, body: { agentId, key: 'secret_fee', memory: 5000 } });
    await chatWith(user, agentId, 'first question');
    await chatWith(user, agentId, 'second question');
    expect(lastPrompt().conversation).toEqual(['first question', fakeAnswerTo('first question'), 'second question']);
    // The running process holds the key (pushed when written), so forgetting it below is a real change.
    expect(lastPrompt().system).toContain('secret_fee: 5000');

    const reset = await call('POST', `/api/instance/${user.userId}/reset-memory`, { session: user, ip: uniqueIp() });
    expect(reset.status).toBe(200);
    // The process that was running still answers until the provisioner replaces it: it already forgot.
    await chatWith(user, agentId, 'what do you remember?');
    expect(lastPrompt().system).not.toContain('secret_fee');
    expect(lastPrompt().conversation).toEqual(['what do you remember?']);

    await provisionerRuns();
    expect((await getInstance(user.userId, true))?.status).toBe('running');
    await chatWith(user, agentId, 'after the relaunch');
    expect(lastPrompt().system).not.toContain('secret_fee');
    expect(lastPrompt().conversation).toEqual(['what do you remember?', fakeAnswerTo('what do you remember?'), 'after the relaunch']);

    const history = await call('GET', `/api/agents/${agentId}/messages?limit=50`, { session: user });
    expect(history.body.messages.map((m: { content: string }) => m.content)).toContain('first question');
  });
});
