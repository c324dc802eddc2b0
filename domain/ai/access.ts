import { accessFrom, getSubscription, type AccountAccess, type SubscriptionRecord } from '#domain/billing/entitlements';
import { PlanRequiredError } from './errors';
import { PLAN_ORDER, type CataloguePlan } from '#domain/models/catalogue';

/**
 * Plan access (spec 2.16), always from the stored account: never from a header or a body. Admins
 * get `network`-level access and need no subscription.
 */

/** An account making a model call, as authenticated by the pipeline or the runtime's gateway token. */
export interface AccountIdentity {
  userId: string;
  isAdmin: boolean;
  isTester: boolean;
}

export interface ModelAccess {
  access: AccountAccess;
  subscription: SubscriptionRecord | undefined;
  /** The plan the call is charged under (admins: `network`). */
  plan: CataloguePlan;
  allowedModels: readonly string[];
}

/** Throws PLAN_REQUIRED / SUBSCRIPTION_REQUIRED unless the stored account may use the model layer. */
export async function modelAccess(identity: AccountIdentity): Promise<ModelAccess> {
  const subscription = await getSubscription(identity.userId);
  const access = accessFrom(identity, subscription);
  if (!access.isAdmin) {
    if (!access.limits) throw new PlanRequiredError('PLAN_REQUIRED', 'a paid plan is required to use the model layer');
    if (!access.subscriptionActive) throw new PlanRequiredError('SUBSCRIPTION_REQUIRED', 'an active subscription is required to use the model layer');
  }
  const plan = access.isAdmin ? 'network' : (access.limits!.name as CataloguePlan);
  if (!PLAN_ORDER.includes(plan)) throw new PlanRequiredError('PLAN_REQUIRED', 'a paid plan is required to use the model layer');
  return { access, subscription, plan, allowedModels: access.models };
}
