import { creditsOfPrice } from '#domain/billing/credit-packs';
import { billingContract } from '#contract/billing';
import { gone } from '#platform/errors';
import { createHandler } from '#http/pipeline';
import { billingOverview, creditsPage, usageOf } from './account';
import { disableByok, enableByok } from './byok';

/**
 * The card actions of POST /api/billing call the processor through its SDK (stripe, a large part
 * of the card function); the reads and the BYOK actions, most of this function's traffic, do not,
 * so the checkout and plan-change code is loaded on the first card action a container serves.
 */
const checkout = () => import('#domain/billing/checkout');
const planChange = () => import('#domain/billing/plan-change');

const retiredCheckout = async () => {
  throw gone('this checkout is retired; use GET /api/card/checkout?plan=<plan>', { use: '/api/card/checkout' });
};

export const handler = createHandler(billingContract, {
  getBilling: async ({ auth }) => billingOverview(auth),
  postBilling: async ({ auth, body }) => {
    switch (body.action) {
      case 'create-checkout':
        return (await checkout()).startPlanCheckout(auth, body.plan);
      case 'buy-credits': {
        const session = await (await checkout()).startCreditsCheckout(auth, body.price);
        return { ...session, credits: creditsOfPrice(body.price) };
      }
      case 'enable-byok':
        return enableByok(auth.userId, body.provider, body.apiKey);
      case 'disable-byok':
        return disableByok(auth.userId, body.provider);
      case 'get-usage':
        return usageOf(auth);
      case 'change-plan':
        return (await planChange()).changePlan(auth, body.plan);
      case 'billing-portal':
        return (await planChange()).billingPortal(auth);
    }
  },
  getCredits: async ({ auth, query }) => creditsPage(auth.userId, query.limit, query.cursor),
  getLegacyCheckout: retiredCheckout,
  postLegacyCheckout: retiredCheckout,
});
