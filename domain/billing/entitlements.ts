import type { AuthContext } from '#domain/auth/authenticate';
import { cardConfig } from '#platform/config';
import { getSubscription, type SubscriptionRecord } from '#data/subscriptions';
import { DomainError } from '#platform/errors';
import { allModelIds, modelsForPlan } from '#domain/models/catalogue';
import { ADMIN_AGENT_LIMIT, agentLimitForPlan, isPlanName, PLANS, type PlanLimits, type PlanName } from './plans';

/**
 * Subscription state (data/subscriptions.ts), written only by verified card webhooks
 * (domain/billing/subscriptions.ts); what an account may do is answered from it.
 */
export { getSubscription, type SubscriptionRecord } from '#data/subscriptions';

export const ACTIVE_STATUSES = new Set(['active', 'trialing']);

/** What an account may do: the one answer every group uses. Identity and plan come from storage only. */
export interface AccountAccess {
  userId: string;
  isAdmin: boolean;
  isTester: boolean;
  plan: PlanName | string | null;
  subscriptionActive: boolean;
  subscriptionId?: string;
  agentLimit: number;
  /** The plan's row of spec 2.16, or undefined without a recognised plan; admins get `network`. */
  limits?: PlanLimits;
  models: readonly string[];
}

export async function accountAccess(auth: AuthContext): Promise<AccountAccess> {
  return accessFrom(auth, await getSubscription(auth.userId));
}

/** The same answer from a subscription record already read (billing shows both without a second read). */
export function accessFrom(auth: Pick<AuthContext, 'userId' | 'isAdmin' | 'isTester'>, sub: SubscriptionRecord | undefined): AccountAccess {
  const active = !!sub && ACTIVE_STATUSES.has(sub.status) && sub.plan !== 'free';
  const plan = sub?.plan ?? null;
  const limits = auth.isAdmin ? PLANS.network : isPlanName(plan) ? PLANS[plan] : undefined;
  return {
    userId: auth.userId,
    isAdmin: auth.isAdmin,
    isTester: auth.isTester,
    plan,
    subscriptionActive: active,
    subscriptionId: sub?.subscriptionId,
    agentLimit: auth.isAdmin ? ADMIN_AGENT_LIMIT : agentLimitForPlan(plan),
    limits,
    models: auth.isAdmin ? allModelIds() : modelsForPlan(limits?.name),
  };
}

/** Spec section 7: the retired `free` plan is answered 402, wherever a plan is named or stored. */
export const freePlanRefused = (body: Record<string, unknown> = {}) =>
  new DomainError('paymentRequired', 'the free plan no longer includes agents; choose a paid plan', 'PLAN_REQUIRED', body);

/**
 * Where a 402 sends the caller: the card checkout of a plan, and in the local stack's card mode,
 * that no card is needed there.
 */
export function subscribeHint(): { subscribe: { checkout: string; billing: string; note?: string } } {
  const local = cardConfig().mode === 'local';
  return {
    subscribe: {
      checkout: 'GET /api/card/checkout?plan=<label|solo|collective|network> (signed in); it redirects to the payment page',
      billing: 'GET /api/billing (your plan and subscription)',
      ...(local ? { note: 'local card mode: the payment page is served by this server and takes no card; pay there and the plan is active' } : {}),
    },
  };
}

/** Spec section 7: a paid subscription is required for all provisioning and usage; admins are exempt. */
export function requireActiveSubscription(access: AccountAccess, body: Record<string, unknown> = {}): void {
  if (access.isAdmin) return;
  if (access.plan === 'free') throw freePlanRefused(body);
  if (!access.subscriptionActive)
    throw new DomainError('paymentRequired', 'an active subscription is required', 'SUBSCRIPTION_REQUIRED', { ...subscribeHint(), ...body });
}

/** For plan-gated features (model layer): a recognised paid plan, or admin. */
export function requirePlan(access: AccountAccess, body: Record<string, unknown> = {}): PlanLimits {
  if (access.isAdmin) return PLANS.network;
  if (!access.limits) throw new DomainError('paymentRequired', 'a paid plan is required', 'PLAN_REQUIRED', body);
  if (!access.subscriptionActive)
    throw new DomainError('paymentRequired', 'an active subscription is required', 'SUBSCRIPTION_REQUIRED', { ...subscribeHint(), ...body });
  return access.limits;
}

/** The plan an instance and its agents report: the stored account's; admins without one run at `network` level. */
export const planLabel = (access: Pick<AccountAccess, 'plan' | 'isAdmin'>) => access.plan ?? (access.isAdmin ? 'network' : 'none');
