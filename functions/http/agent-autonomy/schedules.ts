import type * as z from 'zod/mini';
import type { AuthContext } from '#domain/auth/authenticate';
import { accountAccess, requirePlan } from '#domain/billing/entitlements';
import type { CreateScheduleBody } from '#contract/autonomy';
import { nextCronTime, parseCron } from '#platform/cron';
import { getAgent } from '#data/agents';
import { getChatSession } from '#data/chat-sessions';
import { createSchedule, deleteSchedule, getSchedule, listRuns, listSchedules, type ScheduleRecord, setScheduleState } from '#data/schedules';
import { conflict, invalid, notFound } from '#platform/errors';

/** Scheduled prompts: the owner's routes; the runs are the sweeper's (functions/workers/heartbeat/scheduled-prompts.ts). */

const invalidSchedule = (message: string) => invalid(message, 'INVALID_SCHEDULE');

async function ownedAgent(userId: string, agentId: string) {
  if (!(await getAgent(userId, agentId, true))) throw notFound('no such agent');
}

/** When a schedule is next due, from now: its next cron slot, or its one-time `at` (at once when that passed). */
export async function firstRunAt(when: { cron?: string; at?: string }, now = new Date()): Promise<string | null> {
  if (when.cron) {
    return nextCronTime(await parseCron(when.cron), now)?.toISOString() ?? null;
  }
  return new Date(Math.max(new Date(when.at!).getTime(), now.getTime())).toISOString();
}

/** Validates a schedule's timing and session for an agent; its first due time. */
export async function checkSchedule(userId: string, agentId: string, body: { cron?: string; at?: string; sessionId?: string }, now = new Date()) {
  if ((body.cron === undefined) === (body.at === undefined)) throw invalidSchedule('give exactly one of `cron` and `at`');
  if (body.at && new Date(body.at).getTime() < now.getTime() - 60_000) throw invalidSchedule('`at` is in the past');
  if (body.sessionId) {
    const session = await getChatSession(userId, body.sessionId);
    if (!session || session.agentId !== agentId) throw notFound('no such session of this agent');
  }
  return firstRunAt(body, now);
}

export async function schedulesOf(userId: string, agentId: string) {
  await ownedAgent(userId, agentId);
  return { schedules: await listSchedules(userId, agentId) };
}

/** Creates a schedule under the plan's schedule limit; `status` lets an import bring a paused one. */
export async function addSchedule(
  auth: AuthContext,
  agentId: string,
  body: z.infer<ReturnType<typeof CreateScheduleBody>> & { status?: ScheduleRecord['status'] },
): Promise<ScheduleRecord> {
  await ownedAgent(auth.userId, agentId);
  const limits = requirePlan(await accountAccess(auth));
  const nextRunAt = await checkSchedule(auth.userId, agentId, body);
  const status = body.status === 'paused' ? 'paused' : 'active';
  const schedule = await createSchedule(
    auth.userId,
    { agentId, cron: body.cron, at: body.at, prompt: body.prompt, sessionId: body.sessionId, nextRunAt: status === 'active' ? nextRunAt : null, status },
    limits.schedules,
  );
  if (!schedule) throw notFound('no such agent');
  return schedule;
}

async function ownedSchedule(userId: string, agentId: string, scheduleId: string) {
  const schedule = await getSchedule(userId, agentId, scheduleId);
  if (!schedule) throw notFound('no such schedule');
  return schedule;
}

export async function scheduleDetail(userId: string, agentId: string, scheduleId: string) {
  const schedule = await ownedSchedule(userId, agentId, scheduleId);
  const runs = (await listRuns(userId, scheduleId)).map(({ runId, slot, status, reason, at }) => ({ runId, slot, status, at, ...(reason ? { reason } : {}) }));
  return { schedule, runs };
}

export async function pauseOrResume(userId: string, agentId: string, scheduleId: string, paused: boolean) {
  const schedule = await ownedSchedule(userId, agentId, scheduleId);
  if (schedule.status === 'done') throw conflict('this one-time schedule has run', 'SCHEDULE_DONE');
  const updated = await setScheduleState(
    userId,
    agentId,
    scheduleId,
    paused ? { status: 'paused' } : { status: 'active', nextRunAt: (await firstRunAt(schedule))! },
  );
  if (!updated) throw notFound('no such schedule');
  return { schedule: updated };
}

export async function removeSchedule(userId: string, agentId: string, scheduleId: string) {
  if (!(await deleteSchedule(userId, agentId, scheduleId))) throw notFound('no such schedule');
  return { success: true as const };
}
