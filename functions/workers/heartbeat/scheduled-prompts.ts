import { accessFrom, getSubscription } from '#domain/billing/entitlements';
import { nextCronTime, parseCron } from '#platform/cron';
import { getAgent, pausedByBudget, pausedByLoop } from '#data/agents';
import { budgetReached } from '#data/budgets';
import { appendSessionMessages, getChatSession, sessionMessages } from '#data/chat-sessions';
import { getInstance } from '#data/instances';
import { recordLifecycleEvent } from '#data/lifecycle-events';
import {
  advanceSchedule,
  claimRun,
  countRunOfDay,
  type DueSchedule,
  dueSchedules,
  finishRun,
  releaseRun,
  type RunStatus,
  SCHEDULE_DUE_SHARDS,
} from '#data/schedules';
import { wakeConfig } from '#platform/config';
import { wakeAndWait } from '#domain/lifecycle/wake';
import { logger } from '#http/logger';
import { AgentExchangeError, askAgent } from '#domain/chat/chat';
import { ownerRights } from '#domain/auth/runtime-agent';

/**
 * Runs the scheduled prompts that are due (with every sweeper tick; see data/schedules.ts for
 * the run-once rules). A run sends the prompt to the agent on the account's running instance, as a
 * chat message: the answer lands in the agent's history (and in the schedule's session, when it
 * names one), and a `schedule.run` event records it. A run that cannot happen is recorded as
 * skipped with its reason (`schedule.skipped`): the instance is not running (one stopped for
 * idleness is woken for the run instead), a spending cap is reached, the plan's runs per day are used up, or the account has no
 * active plan. Either way the schedule then moves to its next slot after the time of the run.
 */

const STILL_WAKING = 'instance-waking';

/** A sweeper that dies mid-run leaves the slot to the next tick after this. */
const RUN_LEASE_MS = 5 * 60_000;
const PER_SHARD = 50;
const SESSION_CONTEXT_MESSAGES = 50;

export interface ScheduleRunResult {
  due: number;
  succeeded: number;
  skipped: number;
  failed: number;
}

type Outcome = { status: Exclude<RunStatus, 'running'>; reason?: string; answer?: string };

async function skipReason(s: DueSchedule, now: Date): Promise<string | undefined> {
  const [agent, instance, sub, rights] = await Promise.all([
    getAgent(s.userId, s.agentId),
    getInstance(s.userId),
    getSubscription(s.userId),
    ownerRights(s.userId),
  ]);
  if (!agent) return 'agent-missing';
  // The owner's rights as its chats get them: an admin needs no subscription and has the largest plan's limits.
  const access = accessFrom({ userId: s.userId, isAdmin: !!rights?.isAdmin, isTester: !!rights?.isTester }, sub);
  const plan = access.isAdmin || access.subscriptionActive ? access.limits : undefined;
  if (!plan) return 'subscription-required';
  if (pausedByLoop(agent)) return 'loop-paused';
  if (pausedByBudget(agent) || (await budgetReached(s.userId, s.agentId, now))) return 'budget';
  if (instance?.status !== 'running') {
    // An instance stopped for idleness wakes for the run; one still waking after the wait keeps the slot due for the next tick.
    const woke = await wakeAndWait(s.userId, 'schedule', wakeConfig().waitMs);
    if (woke.state === 'waking') return STILL_WAKING;
    if (woke.state !== 'running') return 'instance-not-running';
  }
  if (agent.phase !== 'ready') return 'instance-not-running';
  if (!(await countRunOfDay(s.userId, now.toISOString().slice(0, 10), plan.scheduledRunsPerDay, now))) return 'daily-run-limit';
  return undefined;
}

async function execute(s: DueSchedule, runId: string): Promise<Outcome> {
  const session = s.sessionId ? await getChatSession(s.userId, s.sessionId) : undefined;
  const earlier = session ? await sessionMessages(s.userId, session.id, SESSION_CONTEXT_MESSAGES) : [];
  const thread = session ? earlier.flatMap(({ role, content }) => (role === 'system' ? [] : [{ role, content }])) : undefined;
  const sentAt = new Date().toISOString();
  const { content } = await askAgent(s.userId, s.agentId, s.prompt, thread);
  if (session) {
    const id = `run_${runId.replaceAll(/[^A-Za-z0-9]/g, '')}`;
    await appendSessionMessages(s.userId, session.id, [
      { id: `${id}_q`, role: 'user', content: s.prompt, createdAt: sentAt },
      { id: `${id}_a`, role: 'assistant', content, createdAt: new Date().toISOString() },
    ]);
  }
  return { status: 'succeeded', answer: content };
}

async function runOne(s: DueSchedule, now: Date): Promise<Outcome['status'] | 'lost'> {
  const slot = s.gsi1sk;
  const runId = `${s.id}#${slot}`;
  const claim = await claimRun(s.userId, s, slot, new Date(now.getTime() + RUN_LEASE_MS), now);
  if (claim === 'busy') return 'lost';
  let outcome: Outcome | undefined;
  if (claim === 'claimed') {
    const reason = await skipReason(s, now);
    if (reason === STILL_WAKING) {
      // Neither run nor skipped: the slot stays due and runs once, on the first tick that finds the instance up.
      await releaseRun(s.userId, s.id, slot);
      return 'lost';
    }
    if (reason) outcome = { status: 'skipped', reason };
    else {
      try {
        outcome = await execute(s, runId);
      } catch (err) {
        if (!(err instanceof AgentExchangeError)) throw err;
        outcome = err.code === 'BUDGET_EXCEEDED' ? { status: 'skipped', reason: 'budget' } : { status: 'failed', reason: err.code ?? 'AGENT_ERROR' };
      }
    }
    await finishRun(s.userId, s.id, slot, outcome, new Date());
    await recordLifecycleEvent(s.userId, {
      type: outcome.status === 'skipped' ? 'schedule.skipped' : 'schedule.run',
      cause: 'schedule',
      agentId: s.agentId,
      status: outcome.status,
      reason: outcome.reason,
      details: { scheduleId: s.id, runId, slot },
    });
  }
  // Counted from the time of the run, so slots missed while nothing ran collapse into this one.
  const next = s.cron ? (nextCronTime(await parseCron(s.cron), now)?.toISOString() ?? null) : null;
  const summary = outcome && { runId, slot, status: outcome.status, ...(outcome.reason ? { reason: outcome.reason } : {}), at: now.toISOString() };
  await advanceSchedule(s.userId, s, slot, next, summary, now);
  return outcome?.status ?? 'lost';
}

export async function runDueSchedules(now = new Date()): Promise<ScheduleRunResult> {
  const result: ScheduleRunResult = { due: 0, succeeded: 0, skipped: 0, failed: 0 };
  for (let shard = 0; shard < SCHEDULE_DUE_SHARDS; shard += 1) {
    const due = await dueSchedules(shard, now, PER_SHARD);
    result.due += due.length;
    await Promise.all(
      due.map(async (s) => {
        try {
          const outcome = await runOne(s, now);
          if (outcome !== 'lost') result[outcome] += 1;
        } catch (err) {
          logger().error('a scheduled prompt could not run', { userId: s.userId, scheduleId: s.id, error: (err as Error).message });
        }
      }),
    );
  }
  return result;
}
