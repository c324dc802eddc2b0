import { createHash } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { LOOP_BREAKER_DEFAULTS } from '#contract/loop-breaker';
import { type AgentRecord, getAgent, pausedByBudget, pausedByLoop } from '#data/agents';
import { agentScope, type BudgetCap } from '#data/budgets';
import { recordLifecycleEvent } from '#data/lifecycle-events';
import { addWindowSpend, countSignature, type LoopTrip, resumeFromLoop, tripLoopBreaker } from '#data/loop-breaker';
import { logger } from '#platform/logger';
import { canonicalJson } from '#domain/payments/canonical-json';
import { AgentLoopPausedError } from './errors';

/**
 * The runaway-loop breaker. Per agent, the platform hashes the calls the agent makes into
 * signatures and counts each in a window (data/loop-breaker.ts); it also sums the agent's settled
 * spend in a shorter window. `repeatLimit` identical calls within `windowSeconds`, or more than
 * `spendShare` of the monthly cap within `spendWindowMinutes`, trip it once (a conditional write on
 * the agent): the agent is paused as the budget pauses it, its metered calls answer 402
 * `AGENT_LOOP_PAUSED`, its schedules are skipped, `agent.loop_detected` carries the evidence, and the
 * owner is mailed. Only the owner's resume lifts it.
 *
 * What "identical" means: a skill call is its skill, action and arguments. A model request carries
 * the whole growing history, so hashing all of it would never repeat; what repeats in a runaway
 * tool loop is the tail: the model asked for the same tool calls and got the same results back.
 * So a model request's signature is the model plus the messages from the last assistant message on,
 * with call ids dropped, and only requests that continue after tool results are counted: a request
 * ending in a user's (or a schedule's) message is input from outside, not the agent looping.
 */

export type LoopBreakerSettings = { -readonly [K in keyof typeof LOOP_BREAKER_DEFAULTS]: number };

export const loopBreakerSettings = (agent: Pick<AgentRecord, 'loopBreaker'>): LoopBreakerSettings => ({ ...LOOP_BREAKER_DEFAULTS, ...agent.loopBreaker });

/** Identifiers that differ between otherwise identical calls: the provider's and the SDK's call ids, provider options. */
const VOLATILE_KEYS = new Set(['toolCallId', 'id', 'providerOptions', 'providerMetadata']);

function normalised(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalised);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k, v]) => !VOLATILE_KEYS.has(k) && v !== undefined)
        .map(([k, v]) => [k, normalised(v)]),
    );
  }
  return typeof value === 'string' ? value.trim() : value;
}

const hash = (value: unknown) =>
  createHash('sha256')
    .update(canonicalJson(normalised(value)))
    .digest('hex')
    .slice(0, 32);

export interface WatchedCall {
  /** `model` or `skill:<name>`: what the signature stands for, shown in the evidence. */
  call: string;
  /** Undefined: the call is not one a loop repeats (it is still refused while the agent is paused). */
  signature?: string;
}

/** A model request's signature, or none when its last message is not a tool result (see above). */
export function modelCallSignature(model: string, messages: readonly ModelMessage[]): WatchedCall {
  if (messages.at(-1)?.role !== 'tool') return { call: 'model' };
  let from = messages.length - 1;
  while (from > 0 && messages[from]!.role !== 'assistant') from -= 1;
  return { call: 'model', signature: hash({ model, tail: messages.slice(from) }) };
}

export const skillCallSignature = (skill: string, body: unknown): WatchedCall => ({ call: `skill:${skill}`, signature: hash({ skill, body }) });

/** The pause and its evidence, the event, the webhook and the owner's email: once per trip. */
async function trip(userId: string, agentId: string, evidence: LoopTrip): Promise<void> {
  if (!(await tripLoopBreaker(userId, agentId, evidence))) return;
  const { call, signature, count, kind, spentUsd, monthlyCapUsd, windowSeconds } = evidence;
  await recordLifecycleEvent(userId, { type: 'agent.loop_detected', cause: 'loop-breaker', agentId, reason: kind, details: { ...evidence } });
  await recordLifecycleEvent(userId, { type: 'agent.paused', cause: 'loop-breaker', agentId, reason: 'loop' });
  const what =
    kind === 'repeated-call'
      ? `It made the same call (${call}, signature ${signature}) ${count} times within ${windowSeconds / 60} minutes.`
      : `It spent $${spentUsd.toFixed(4)} within ${windowSeconds / 60} minutes, more than its share of the $${monthlyCapUsd} monthly cap.`;
  const { notifyOwner } = await import('./budget-actions');
  await notifyOwner(
    userId,
    `Agent ${agentId} was paused: it looks like a runaway loop`,
    `${what} Its metered calls are refused and its schedules skipped until you resume it (POST /api/agents/${agentId}/loop-breaker/resume, or Resume in the console).`,
  );
}

/**
 * Before an agent's metered call or skill call: refuses it while the agent is paused by the loop
 * breaker, counts its signature, and trips the breaker on the call that reaches the repeat limit
 * (that call is refused too).
 */
export async function watchAgentCall(userId: string, agentId: string, watched: WatchedCall, now = new Date()): Promise<void> {
  const agent = await getAgent(userId, agentId);
  if (!agent) return;
  if (pausedByLoop(agent)) throw new AgentLoopPausedError();
  if (!watched.signature) return;
  const settings = loopBreakerSettings(agent);
  const count = await countSignature(userId, agentId, watched.signature, settings.windowSeconds, now);
  if (count < settings.repeatLimit) return;
  await trip(userId, agentId, {
    kind: 'repeated-call',
    call: watched.call,
    signature: watched.signature,
    count,
    windowSeconds: settings.windowSeconds,
    spentUsd: 0,
    at: now.toISOString(),
  });
  throw new AgentLoopPausedError();
}

/**
 * Fewer calls than this in the spend window are never a runaway, however dear: a few expensive calls
 * against a small cap are what the cap itself stops.
 */
const MIN_VELOCITY_CALLS = 5;

/**
 * After an agent's call is settled: adds its cost to the agent's spend window and trips the breaker
 * past the share of the monthly cap (the agent's, else the account's). No cap, no spend check: a
 * share of nothing is not a rate. A failure is logged: the call itself is settled.
 */
export async function watchAgentSpend(userId: string, agentId: string, costUsd: number, caps: readonly BudgetCap[], now = new Date()): Promise<void> {
  const cap = caps.find((c) => c.scope === agentScope(agentId)) ?? caps[0];
  if (!cap || costUsd <= 0) return;
  try {
    const agent = await getAgent(userId, agentId);
    if (!agent || pausedByLoop(agent) || pausedByBudget(agent)) return;
    const settings = loopBreakerSettings(agent);
    const windowSeconds = settings.spendWindowMinutes * 60;
    const { spentUsd, calls } = await addWindowSpend(userId, agentId, costUsd, windowSeconds, now);
    if (calls < MIN_VELOCITY_CALLS || spentUsd <= cap.monthlyCapUsd * settings.spendShare) return;
    await trip(userId, agentId, { kind: 'spend-velocity', windowSeconds, spentUsd, monthlyCapUsd: cap.monthlyCapUsd, at: now.toISOString() });
  } catch (err) {
    logger().error('loop breaker spend check failed', { userId, agentId, error: (err as Error).message });
  }
}

/** The owner's resume: lifts the pause, starts the windows afresh, records `agent.resumed`. */
export async function resumeLoopPausedAgent(userId: string, agentId: string): Promise<boolean> {
  if (!(await resumeFromLoop(userId, agentId))) return false;
  await recordLifecycleEvent(userId, { type: 'agent.resumed', cause: 'user', agentId, reason: 'loop breaker resumed' });
  return true;
}
