import type { AuthContext } from '../../shared/auth/authenticate';
import { createCreditsCheckout, createStorageCheckout, createSubscriptionCheckout, type CheckoutSession } from '../../shared/adapters/card';
import { accessFrom, freePlanRefused, getSubscription, requireActiveSubscription } from '../../shared/billing/entitlements';
import type { PlanName } from '../../shared/billing/plans';
import { config } from '../../shared/config';
import { conflict } from '../../shared/http/errors';

/** Who pays: the account, its email for the receipt, and its processor customer when it has one. */
async function buyerOf(auth: AuthContext) {
  const sub = await getSubscription(auth.userId);
  return { buyer: { userId: auth.userId, email: auth.email, customerId: sub?.customerId }, access: accessFrom(auth, sub) };
}

/**
 * A subscription checkout for `plan`. A second subscription while one is active would bill twice,
 * so that is refused; a plan change goes through the current subscription at the processor.
 */
export async function startPlanCheckout(auth: AuthContext, plan: PlanName | 'free', metadata: Record<string, string> = {}): Promise<CheckoutSession> {
  if (plan === 'free') throw freePlanRefused();
  const { buyer, access } = await buyerOf(auth);
  if (access.subscriptionActive) {
    const what = access.plan ? `the ${access.plan} plan is` : 'a subscription is';
    throw conflict(`${what} already active; change it with change-plan or cancel it in the billing portal`, 'ALREADY_SUBSCRIBED', { plan: access.plan });
  }
  return createSubscriptionCheckout(buyer, plan, metadata);
}

export async function startCreditsCheckout(auth: AuthContext, price: string): Promise<CheckoutSession> {
  const { buyer } = await buyerOf(auth);
  return createCreditsCheckout(buyer, price);
}

/** Extra storage is on top of a plan, so it needs one in force (admins are exempt, as everywhere). */
export async function startStorageCheckout(auth: AuthContext, storageGb: number): Promise<CheckoutSession> {
  const { buyer, access } = await buyerOf(auth);
  requireActiveSubscription(access);
  return createStorageCheckout(buyer, storageGb);
}

/**
 * Gateway card payments ride on a subscription of an account: the gateway only accepts card payment
 * with a session (spec 4.12), so a subscription bought without one could never pay for a call (and
 * the card webhook could not tie it to anyone). A caller without a session (the 402 challenge reaches
 * machines and browsers alike) is therefore sent to the app's billing page, which signs them in or up
 * before the subscription checkout; with one in force there is nothing to buy.
 */
export async function gatewayCheckoutTarget(auth: AuthContext | undefined, plugin: string, plan: PlanName): Promise<string> {
  const billingPage = (params: Record<string, string>) => {
    const url = new URL('/settings/billing', config().appUrl);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url.href;
  };
  if (!auth) return billingPage({ plugin, plan });
  const { buyer, access } = await buyerOf(auth);
  if (access.isAdmin || access.subscriptionActive) return billingPage({ plugin });
  return (await createSubscriptionCheckout(buyer, plan, { plugin })).url;
}
