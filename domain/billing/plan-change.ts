import { changePlan as changeProcessorPlan, createPortalSession } from '#adapters/card';
import type { AuthContext } from '#domain/auth/authenticate';
import { accessFrom, freePlanRefused, getSubscription } from './entitlements';
import { PLANS, type PlanName } from './plans';
import { config } from '#platform/config';
import { agentQuotaUsed } from '#data/agents';
import { listInstalledSkills } from '#data/installed-skills';
import { conflict, DomainError } from '#platform/errors';

const subscriptionRequired = () =>
  new DomainError('paymentRequired', 'an active card subscription is required to change plan; start one with create-checkout', 'SUBSCRIPTION_REQUIRED');

/** What the account holds against a plan's limits: agents holding quota, and installed skills. */
async function holdings(userId: string): Promise<{ agents: number; skills: number }> {
  const [agents, skills] = await Promise.all([agentQuotaUsed(userId), listInstalledSkills(userId, undefined, true)]);
  return { agents, skills: skills.length };
}

/**
 * Upgrade or downgrade through the processor (the subscription's price changes, prorated there).
 * A downgrade below what the account holds is refused with what to remove first. The stored plan
 * changes only when the processor's webhook confirms, like every subscription change.
 */
export async function changePlan(auth: AuthContext, plan: PlanName | 'free') {
  if (plan === 'free') throw freePlanRefused();
  const sub = await getSubscription(auth.userId);
  const access = accessFrom(auth, sub);
  if (!access.subscriptionActive || !sub?.subscriptionId) throw subscriptionRequired();
  if (access.plan === plan) throw conflict(`the ${plan} plan is already active`, 'SAME_PLAN', { plan });
  const target = PLANS[plan];
  const current = await holdings(auth.userId);
  const limit = { agents: target.agents, skills: target.skills };
  const excess = [
    current.agents > limit.agents ? `${current.agents - limit.agents} agent${current.agents - limit.agents === 1 ? '' : 's'}` : undefined,
    current.skills > limit.skills ? `${current.skills - limit.skills} installed skill${current.skills - limit.skills === 1 ? '' : 's'}` : undefined,
  ].filter(Boolean);
  if (excess.length)
    throw conflict(`the ${plan} plan allows fewer than this account holds: remove ${excess.join(' and ')} first`, 'PLAN_LIMIT_EXCEEDED', {
      plan,
      current,
      limit,
    });
  const result = await changeProcessorPlan(sub.subscriptionId, plan);
  return { success: true as const, plan, previousPlan: access.plan, subscriptionId: result.subscriptionId, status: 'pending' as const };
}

/** The processor's billing portal (update the card, invoices, cancel) for an account that has been a customer. */
export async function billingPortal(auth: AuthContext): Promise<{ url: string }> {
  const sub = await getSubscription(auth.userId);
  if (!sub?.customerId) throw new DomainError('notFound', 'this account has no card customer yet; subscribe first', 'NO_CARD_CUSTOMER');
  return createPortalSession(sub.customerId, new URL('/settings/billing', config().appUrl).href);
}
