import { describe, expect, it } from 'vitest';
import { handler } from '#functions/workers/provisioner/handler';
import { instanceMemoryMiB } from '#domain/billing/plans';
import { getInstance } from '#data/instances';
import { accountSession, call, uniqueIp } from '../helpers/api';
import { drain, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed({ PROVISION_HEALTH_ATTEMPTS: '150' });

async function provisionerRuns() {
  const messages = await drain(bed.queueUrl);
  expect((await handler(sqsEvent(...messages.map((m) => sqsRecord(m))))).batchItemFailures).toEqual([]);
}

describe("the instance's memory is the plan's (spec 2.16), taken at each launch", () => {
  it('maps the agent memory column: label 8 GB, solo 2 GB, collective 4 GB, network 16 GB', () => {
    expect([instanceMemoryMiB('label'), instanceMemoryMiB('solo'), instanceMemoryMiB('collective'), instanceMemoryMiB('network')]).toEqual([
      8192, 2048, 4096, 16384,
    ]);
    expect(instanceMemoryMiB(undefined)).toBe(2048);
  });

  it('the local runtime runs capped at the plan memory and reports it as its limit; a plan change applies at the next launch', async () => {
    const user = await accountSession();
    await subscribe(user.userId, 'label');
    const agentId = (await call('POST', '/api/agents/provision', { session: user, body: { name: 'Sized' }, ip: uniqueIp() })).body.agent.id;
    await provisionerRuns();
    expect(bed.launcher.launchesFor(user.userId).at(-1)!.memoryMiB).toBe(8192);
    const labelStats = await call('GET', `/api/agents/${agentId}/stats`, { session: user });
    expect(labelStats.body.status).toBe('ok');
    expect(labelStats.body.stats.memory).toMatch(/ \/ 8(\.0+)?GiB$/);

    await subscribe(user.userId, 'solo');
    expect((await call('POST', `/api/instance/${user.userId}/restart`, { session: user, ip: uniqueIp() })).status).toBe(200);
    await provisionerRuns();
    expect((await getInstance(user.userId, true))?.status).toBe('running');
    expect(bed.launcher.launchesFor(user.userId).at(-1)!.memoryMiB).toBe(2048);
    const soloStats = await call('GET', `/api/agents/${agentId}/stats`, { session: user });
    expect(soloStats.body.stats.memory).toMatch(/ \/ 2(\.0+)?GiB$/);
  });
});
