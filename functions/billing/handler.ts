import { creditsOfPrice } from '../../shared/adapters/card';
import { billingContract } from '../../shared/contract/billing';
import { gone } from '../../shared/http/errors';
import { createHandler } from '../../shared/http/pipeline';
import { reply } from '../../shared/http/reply';
import { billingOverview, creditsPage, usageOf } from './account';
import { disableByok, enableByok } from './byok';
import { gatewayCheckoutTarget, startCreditsCheckout, startPlanCheckout, startStorageCheckout } from './checkout';
import { billingPortal, changePlan } from './plan-change';
import { receiveCardWebhook } from './webhook';

const retiredCheckout = async () => {
  throw gone('this checkout is retired; use GET /api/card/checkout?plan=<plan>', { use: '/api/card/checkout' });
};

export const handler = createHandler(billingContract, {
  getBilling: async ({ auth }) => billingOverview(auth),
  postBilling: async ({ auth, body }) => {
    switch (body.action) {
      case 'create-checkout':
        return startPlanCheckout(auth, body.plan);
      case 'buy-credits': {
        const session = await startCreditsCheckout(auth, body.price);
        return { ...session, credits: creditsOfPrice(body.price) };
      }
      case 'enable-byok':
        return enableByok(auth.userId, body.provider, body.apiKey);
      case 'disable-byok':
        return disableByok(auth.userId, body.provider);
      case 'get-usage':
        return usageOf(auth);
      case 'change-plan':
        return changePlan(auth, body.plan);
      case 'billing-portal':
        return billingPortal(auth);
    }
  },
  getCredits: async ({ auth, query }) => creditsPage(auth.userId, query.limit, query.cursor),
  cardCheckoutRedirect: async ({ auth, query }) => reply.redirect((await startPlanCheckout(auth, query.plan)).url),
  cardPortalRedirect: async ({ auth }) => reply.redirect((await billingPortal(auth)).url),
  cardCreditsRedirect: async ({ auth, query }) => reply.redirect((await startCreditsCheckout(auth, query.price)).url),
  cardStorageUpgrade: async ({ auth, body }) => startStorageCheckout(auth, body.storageGb),
  // 303: the browser follows with a GET whatever method reached here (RFC 9110 15.4.4).
  createGatewayCardPayment: async ({ auth, query }) => reply.redirect(await gatewayCheckoutTarget(auth, query.plugin, query.plan), 303),
  getLegacyCheckout: retiredCheckout,
  postLegacyCheckout: retiredCheckout,
  cardWebhook: async ({ rawBody, headers }) => receiveCardWebhook(rawBody, headers['stripe-signature']),
});
