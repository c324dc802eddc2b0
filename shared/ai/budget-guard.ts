import { sendEmail } from '../adapters/email';
import { requestProvisioning } from '../adapters/launcher';
import { ACCOUNT_SCOPE, type BudgetCap, claimBudgetAlert, getSpend } from '../db/budgets';
import * as keys from '../db/keys';
import { getInstance, transitionInstance } from '../db/instances';
import { recordLifecycleEvent } from '../db/lifecycle-events';
import { ConditionFailedError, tenant } from '../db/tenant';
import { getUser } from '../db/users';
import { logger } from '../logger';

/**
 * The kill switch of the spending caps (issue 22). At 80 % of a cap: a `budget.warning` event (and
 * so its webhook) and an email; at 100 %: a `budget.exceeded` event and an email, and what the cap
 * covers is paused: the account's instance is stopped with reason `budget` (an account cap), or the
 * agent is marked paused (an agent cap: the instance keeps serving the account's other agents).
 * Each alert goes once per month per cap value (a conditional mark on the month's spend item).
 * Raising the cap above the month's spend resumes what the cap paused, never a stop the user asked for.
 */

export const WARNING_SHARE = 0.8;

const agentIdOf = (scope: string) => (scope === ACCOUNT_SCOPE ? undefined : scope.slice('AGENT#'.length));
const scopeName = (scope: string) => (scope === ACCOUNT_SCOPE ? 'your account' : `agent ${agentIdOf(scope)}`);

async function notifyOwner(userId: string, subject: string, text: string) {
  const user = await getUser(userId);
  if (!user?.email) return;
  try {
    await sendEmail({ to: user.email, subject, text });
  } catch (err) {
    logger().error('could not send a budget email', { userId, error: (err as Error).message });
  }
}

async function pauseScope(userId: string, scope: string) {
  const agentId = agentIdOf(scope);
  if (agentId) {
    try {
      await tenant(userId).update(
        keys.agent(userId, agentId),
        { expression: 'SET pausedReason = :budget, pausedAt = :now', values: { ':budget': 'budget', ':now': new Date().toISOString() } },
        { expression: 'attribute_exists(pk)' },
      );
    } catch (err) {
      if (err instanceof ConditionFailedError) return;
      throw err;
    }
    await recordLifecycleEvent(userId, { type: 'agent.paused', cause: 'budget', agentId, reason: 'budget' });
    return;
  }
  const instance = await getInstance(userId, true);
  if (!instance || instance.status === 'stopped') return;
  const { after, changed } = await transitionInstance(userId, 'stop', { jobOwner: (g) => `gen-${g}`, cause: 'budget', stopReason: 'budget' });
  if (changed) await requestProvisioning({ kind: 'lifecycle', userId, generation: after.generation, op: 'stop' });
}

async function alertIfCrossed(userId: string, cap: BudgetCap, spentUsd: number) {
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

/** After a call's spend is written: the alerts and the kill switch of each cap it counted against. */
export async function checkBudgets(userId: string, caps: BudgetCap[]): Promise<void> {
  for (const cap of caps) {
    try {
      await alertIfCrossed(userId, cap, (await getSpend(userId, cap.scope)).spentUsd);
    } catch (err) {
      // The call itself is settled; a failed alert is retried by the next call or refusal.
      logger().error('budget alert failed', { userId, scope: cap.scope, error: (err as Error).message });
    }
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
    try {
      await tenant(userId).update(
        keys.agent(userId, agentId),
        { expression: 'REMOVE pausedReason, pausedAt' },
        { expression: 'pausedReason = :budget', values: { ':budget': 'budget' } },
      );
    } catch (err) {
      if (err instanceof ConditionFailedError) return false;
      throw err;
    }
    await recordLifecycleEvent(userId, { type: 'agent.resumed', cause: 'budget', agentId, reason: 'budget raised' });
    return true;
  }
  const instance = await getInstance(userId, true);
  if (instance?.status !== 'stopped' || instance.stopReason !== 'budget') return false;
  const { after, changed } = await transitionInstance(userId, 'start', { jobOwner: (g) => `gen-${g}`, cause: 'budget' });
  if (changed) await requestProvisioning({ kind: 'lifecycle', userId, generation: after.generation, op: 'start' });
  return changed;
}
