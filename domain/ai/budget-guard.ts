import { type BudgetCap, getSpend } from '#data/budgets';
import { logger } from '#platform/logger';

/**
 * The kill switch of the spending caps. At 80 % of a cap: a `budget.warning` event (and
 * so its webhook) and an email; at 100 %: a `budget.exceeded` event and an email, and what the cap
 * covers is paused: the account's instance is stopped with reason `budget` (an account cap), or the
 * agent is marked paused (an agent cap: the instance keeps serving the account's other agents).
 * Each alert goes once per month per cap value (a conditional mark on the month's spend item).
 * Raising the cap above the month's spend resumes what the cap paused, never a stop the user asked for.
 */

export const WARNING_SHARE = 0.8;

/** The alerts, the pause and the resume, imported by the first cap a container sees crossed (or raised). */
const budgetActions = () => import('./budget-actions');

/** After a call's spend is written: the alerts and the kill switch of each cap it counted against. */
export async function checkBudgets(userId: string, caps: BudgetCap[]): Promise<void> {
  for (const cap of caps) {
    try {
      const { spentUsd } = await getSpend(userId, cap.scope);
      // Caps are positive, so below the warning share neither alert can be due.
      if (spentUsd >= cap.monthlyCapUsd * WARNING_SHARE) await (await budgetActions()).alertIfCrossed(userId, cap, spentUsd);
    } catch (err) {
      // The call itself is settled; a failed alert is retried by the next call or refusal.
      logger().error('budget alert failed', { userId, scope: cap.scope, error: (err as Error).message });
    }
  }
}

/**
 * After the cap was raised (or removed): resumes what the budget paused when the month's spend is
 * now below the cap (./budget-actions.ts).
 */
export async function resumeIfUnderCap(userId: string, scope: string, monthlyCapUsd: number | undefined): Promise<boolean> {
  return (await budgetActions()).resumeIfUnderCap(userId, scope, monthlyCapUsd);
}
