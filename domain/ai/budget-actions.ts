import { queueEmail } from '#adapters/email-queue';
import { requestProvisioning } from '#adapters/provisioning-queue';
import { pauseAgentForBudget, resumeAgentPausedByBudget } from '#data/agents';
import { ACCOUNT_SCOPE, type BudgetCap, claimBudgetAlert, getSpend } from '#data/budgets';
import { getInstance, transitionInstance } from '#data/instances';
import { recordLifecycleEvent } from '#data/lifecycle-events';
import { getUser } from '#data/users';
import { logger } from '#platform/logger';
import { WARNING_SHARE } from './budget-guard';

/**
 * What a spending cap does once it is crossed (./budget-guard.ts): the alerts, the pause and the
 * resume. Loaded by the first call whose spend reaches 80 % of a cap, or by a raised cap: the
 * provisioning queue and the instance transitions stay out of the cold start of every function that
 * meters a model call. The alert emails go through the events queue (../adapters/email-queue.ts), so
 * these functions do not package the SES client at all.
 */

const agentIdOf = (scope: string) => (scope === ACCOUNT_SCOPE ? undefined : scope.slice('AGENT#'.length));
const scopeName = (scope: string) => (scope === ACCOUNT_SCOPE ? 'your account' : `agent ${agentIdOf(scope)}`);

/** Queues an email to the account's owner; a failure is logged, never thrown (the pause stands without it). */
export async function notifyOwner(userId: string, subject: string, text: string) {
  const user = await getUser(userId);
  if (!user?.email) return;
  try {
    await queueEmail(userId, { to: user.email, subject, text });
  } catch (err) {
    logger().error('could not queue a budget email', { userId, error: (err as Error).message });
  }
}

async function pauseScope(userId: string, scope: string) {
  const agentId = agentIdOf(scope);
  if (agentId) {
    if (!(await pauseAgentForBudget(userId, agentId))) return;
    await recordLifecycleEvent(userId, { type: 'agent.paused', cause: 'budget', agentId, reason: 'budget' });
    return;
  }
  const instance = await getInstance(userId, true);
  if (!instance || instance.status === 'stopped') return;
  const { after, changed } = await transitionInstance(userId, 'stop', { jobOwner: (g) => `gen-${g}`, cause: 'budget', stopReason: 'budget' });
  if (changed) await requestProvisioning({ kind: 'lifecycle', userId, generation: after.generation, op: 'stop' });
}

export async function alertIfCrossed(userId: string, cap: BudgetCap, spentUsd: number) {
  const details = { scope: cap.scope, monthlyCapUsd: cap.monthlyCapUsd, spentUsd };
  const agentId = agentIdOf(cap.scope);
  if (
    spentUsd >= cap.monthlyCapUsd * WARNING_SHARE &&
    (await claimBudgetAlert(userId, cap.scope, 'warnedAtCap', cap.monthlyCapUsd, cap.monthlyCapUsd * WARNING_SHARE))
  ) {
    await recordLifecycleEvent(userId, { type: 'budget.warning', cause: 'budget', agentId, details });
    await notifyOwner(
      userId,
      `80 % of the monthly spending cap of ${scopeName(cap.scope)} is used`,
      `Spent this month: $${spentUsd.toFixed(4)} of the $${cap.monthlyCapUsd} cap. At the cap, metered calls are refused and the agents it covers are paused.`,
    );
  }
  if (spentUsd >= cap.monthlyCapUsd && (await claimBudgetAlert(userId, cap.scope, 'exceededAtCap', cap.monthlyCapUsd, cap.monthlyCapUsd))) {
    await recordLifecycleEvent(userId, { type: 'budget.exceeded', cause: 'budget', agentId, reason: 'budget', details });
    await pauseScope(userId, cap.scope);
    await notifyOwner(
      userId,
      `The monthly spending cap of ${scopeName(cap.scope)} is reached`,
      `Spent this month: $${spentUsd.toFixed(4)} of the $${cap.monthlyCapUsd} cap. Metered calls are refused and ${scopeName(cap.scope)} is paused until you raise the cap or the month ends.`,
    );
  }
}

/**
 * After the cap was raised (or removed): resumes what the budget paused when the month's spend is
 * now below the cap. A stop the user asked for carries no `stopReason` and is left alone.
 */
export async function resumeIfUnderCap(userId: string, scope: string, monthlyCapUsd: number | undefined): Promise<boolean> {
  const { spentUsd } = await getSpend(userId, scope);
  if (monthlyCapUsd !== undefined && spentUsd >= monthlyCapUsd) return false;
  const agentId = agentIdOf(scope);
  if (agentId) {
    if (!(await resumeAgentPausedByBudget(userId, agentId))) return false;
    await recordLifecycleEvent(userId, { type: 'agent.resumed', cause: 'budget', agentId, reason: 'budget raised' });
    return true;
  }
  const instance = await getInstance(userId, true);
  if (instance?.status !== 'stopped' || instance.stopReason !== 'budget') return false;
  const { after, changed } = await transitionInstance(userId, 'start', { jobOwner: (g) => `gen-${g}`, cause: 'budget' });
  if (changed) await requestProvisioning({ kind: 'lifecycle', userId, generation: after.generation, op: 'start' });
  return changed;
}
