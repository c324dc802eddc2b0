import { describe, expect, it } from 'vitest';
import { handler } from '#functions/workers/provisioner/handler';
import { agentQuotaUsed, createAgent, getAgent } from '#data/agents';
import { ensureInstance, getInstance, settleLaunch } from '#data/instances';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { agentJobId, claimJob, completeJob, jobState } from '#data/provision-jobs';
import { redriveStranded } from '#domain/lifecycle/stranded';
import { accountSession } from '../helpers/api';
import { drain, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

/**
 * The crash windows of provisioning, in one process: each left as a crash leaves
 * it, then one reconciler pass. The work is dated in 1990, and the pass only looks before a day
 * later, so the reconciler (which reads every account's listing) touches this file's work only.
 */

const bed = useAgentsTestBed();
const ACCEPTED = new Date('1990-01-01T00:00:00.000Z');
const WINDOW = { olderThan: new Date('1990-01-02T00:00:00.000Z') };
const newAgent = { name: 'stranded', model: 'openai/gpt-4o-mini', config: {}, source: 'api' as const };

async function strandedAgent() {
  const user = await accountSession();
  await subscribe(user.userId);
  const agent = await createAgent(user.userId, newAgent, 3, { now: ACCEPTED });
  return { user, agent };
}

async function provisionerRuns() {
  const messages = await drain(bed.queueUrl);
  const out = await handler(sqsEvent(...messages.map((m) => sqsRecord(m))));
  expect(out.batchItemFailures).toEqual([]);
  return messages;
}

describe('provisioning stranded by a crash', { timeout: 60_000 }, () => {
  it('an agent written whose queue message never went out is queued again and runs; its quota stays exact', async () => {
    const { user, agent } = await strandedAgent();
    const pass = await redriveStranded(WINDOW);
    expect(pass.agentsRequeued).toBeGreaterThanOrEqual(1);
    expect(await provisionerRuns()).toEqual([{ kind: 'agent', userId: user.userId, agentId: agent.id, ownerEmail: user.email }]);
    expect((await getAgent(user.userId, agent.id, true))?.phase).toBe('ready');
    expect((await getInstance(user.userId, true))?.status).toBe('running');
    expect(await agentQuotaUsed(user.userId)).toBe(1);

    // Settled work leaves the listing: the next pass finds nothing of this account.
    await redriveStranded(WINDOW);
    expect(await drain(bed.queueUrl)).toEqual([]);
  });

  it("a dead worker's claim is released and the work queued again; a live worker's claim is left alone", async () => {
    const { user, agent } = await strandedAgent();
    const claim = await claimJob(user.userId, agentJobId(agent.id));
    expect(claim.state).toBe('claimed');

    // A live worker holds it (its lease runs): nothing is done.
    await redriveStranded(WINDOW);
    expect(await drain(bed.queueUrl)).toEqual([]);
    expect((await jobState(user.userId, agentJobId(agent.id))).state).toBe('claimed');

    // The local stack at start knows every claim taken before it is a dead worker's.
    await redriveStranded({ ...WINDOW, workersDeadBefore: new Date(Date.now() + 1000) });
    expect((await jobState(user.userId, agentJobId(agent.id))).state).toBe('none');
    await provisionerRuns();
    expect((await getAgent(user.userId, agent.id, true))?.phase).toBe('ready');
  });

  it('an agent whose job ran, but whose launch settled without it (a crash in between), follows the instance', async () => {
    const { user, agent } = await strandedAgent();
    const other = await createAgent(user.userId, { ...newAgent, name: 'owner' }, 3, { now: ACCEPTED });
    await ensureInstance(user.userId, { ownerEmail: user.email, image: 'img', runtimeVersion: '1', jobOwner: agentJobId(other.id) });
    const claim = await claimJob(user.userId, agentJobId(agent.id));
    await completeJob(user.userId, agentJobId(agent.id), (claim as { token: string }).token);
    await settleLaunch(user.userId, 1, { status: 'error', reason: 'the image could not be pulled' });

    const pass = await redriveStranded(WINDOW);
    expect(pass.agentsSettled).toBeGreaterThanOrEqual(1);
    expect(await getAgent(user.userId, agent.id, true)).toMatchObject({ phase: 'error', failureReason: 'the image could not be pulled' });
    expect(await agentQuotaUsed(user.userId)).toBe(0);
  });

  it('a launch stranded in provisioning is taken over once by a new generation, even by two passes at once, and runs', async () => {
    const user = await accountSession();
    await subscribe(user.userId);
    const agent = await createAgent(user.userId, newAgent, 3, { now: ACCEPTED });
    await ensureInstance(
      user.userId,
      { ownerEmail: user.email, image: 'agent-platform/runtime:local', runtimeVersion: '1.0.0', jobOwner: agentJobId(agent.id) },
      ACCEPTED,
    );
    // Its worker died after the claim: the claim outlived its lease.
    await claimJob(user.userId, agentJobId(agent.id), ACCEPTED.getTime());

    const passes = await Promise.all([redriveStranded(WINDOW), redriveStranded(WINDOW)]);
    expect(passes.map((p) => p.launchesTakenOver).reduce((a, b) => a + b)).toBeGreaterThanOrEqual(1);
    const taken = (await getInstance(user.userId, true))!;
    expect(taken).toMatchObject({ status: 'provisioning', generation: 2, op: 'restart', jobOwner: 'gen-2' });
    const events = (await listLifecycleEvents(user.userId, 100)).events.filter((e) => e.cause === 'reconciler');
    expect(events.map((e) => e.type)).toEqual(['instance.superseded', 'instance.requested']);
    expect(events[1]!.reason).toContain('stranded');

    const queued = await provisionerRuns();
    expect(queued).toContainEqual({ kind: 'lifecycle', userId: user.userId, generation: 2, op: 'restart' });
    expect((await getInstance(user.userId, true))?.status).toBe('running');
    expect((await getAgent(user.userId, agent.id, true))?.phase).toBe('ready');
    expect(await agentQuotaUsed(user.userId)).toBe(1);
  });
});
