import type { AuthContext } from '#domain/auth/authenticate';
import { createCreditsCheckout, createGatewayCallCheckout, createStorageCheckout, createSubscriptionCheckout, type CheckoutSession } from '#adapters/card';
import { accessFrom, freePlanRefused, getSubscription, requireActiveSubscription } from './entitlements';
import { gatewayCardPrice } from '#domain/payments/gateway-card';
import type { PlanName } from './plans';
import { config } from '#platform/config';
import type { GatewayPluginId } from '#contract/gateway';
import { gatewayReceiptHash, newGatewayReceiptToken } from '#data/gateway-receipts';
import { conflict, DomainError } from '#platform/errors';
import { creditsOfPrice } from './credit-packs';

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
  const credits = creditsOfPrice(price);
  if (!credits) throw new DomainError('invalid', 'unknown credit pack price', 'UNKNOWN_PRICE');
  return createCreditsCheckout(buyer, price, credits);
}

/** Extra storage is on top of a plan, so it needs one in force (admins are exempt, as everywhere). */
export async function startStorageCheckout(auth: AuthContext, storageGb: number): Promise<CheckoutSession> {
  const { buyer, access } = await buyerOf(auth);
  requireActiveSubscription(access);
  return createStorageCheckout(buyer, storageGb);
}

/** Where a one-off gateway payment returns: the receipt token rides in the fragment, which browsers never send to a server. */
export const GATEWAY_RECEIPT_PAGE = '/gateway/receipt';

/**
 * One gateway call paid by card without an account (the 402 challenge reaches machines and browsers
 * alike): a payment-mode checkout at the call's card price. The receipt token is made here, only its
 * hash goes to the processor (metadata), and the token comes back to the payer in the success URL's
 * fragment; the webhook makes the receipt redeemable (`Authorization: Bearer gwr_…` on the gateway).
 */
async function gatewayCallCheckout(plugin: GatewayPluginId): Promise<CheckoutSession> {
  const token = newGatewayReceiptToken();
  const page = (params: Record<string, string>) => `${new URL(GATEWAY_RECEIPT_PAGE, config().appUrl).href}?${new URLSearchParams(params)}`;
  return createGatewayCallCheckout({
    plugin,
    price: gatewayCardPrice(plugin),
    receiptHash: gatewayReceiptHash(token),
    successUrl: `${page({ plugin, checkout: 'success' })}#receipt=${token}`,
    cancelUrl: page({ plugin, checkout: 'cancelled' }),
  });
}

/**
 * The `checkoutUrl` of a gateway 402: without a session, a one-off checkout for one call; with a
 * session and no subscription, the subscription checkout (card calls of an account ride on its
 * subscription, spec 4.12); with one in force there is nothing to buy: back to the app.
 */
export async function gatewayCheckoutTarget(auth: AuthContext | undefined, plugin: GatewayPluginId, plan: PlanName): Promise<string> {
  if (!auth) return (await gatewayCallCheckout(plugin)).url;
  const { buyer, access } = await buyerOf(auth);
  if (access.isAdmin || access.subscriptionActive) {
    const billingPage = new URL('/settings/billing', config().appUrl);
    billingPage.searchParams.set('plugin', plugin);
    return billingPage.href;
  }
  return (await createSubscriptionCheckout(buyer, plan, { plugin })).url;
}
