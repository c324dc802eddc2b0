import { cardContract } from '#contract/card';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { gatewayCheckoutTarget, startCreditsCheckout, startPlanCheckout, startStorageCheckout } from '#domain/billing/checkout';
import { billingPortal } from '#domain/billing/plan-change';
import { receiveCardWebhook } from './webhook';

export const handler = createHandler(cardContract, {
  cardCheckoutRedirect: async ({ auth, query }) => reply.redirect((await startPlanCheckout(auth, query.plan)).url),
  cardPortalRedirect: async ({ auth }) => reply.redirect((await billingPortal(auth)).url),
  cardCreditsRedirect: async ({ auth, query }) => reply.redirect((await startCreditsCheckout(auth, query.price)).url),
  cardStorageUpgrade: async ({ auth, body }) => startStorageCheckout(auth, body.storageGb),
  // 303: the browser follows with a GET whatever method reached here (RFC 9110 15.4.4).
  createGatewayCardPayment: async ({ auth, query }) => reply.redirect(await gatewayCheckoutTarget(auth, query.plugin, query.plan), 303),
  cardWebhook: async ({ rawBody, headers }) => receiveCardWebhook(rawBody, headers['stripe-signature']),
});
