import * as z from 'zod/mini';
import { PlanName } from './account-fields';
import { lazySchema } from './route';

/**
 * What the billing group (POST /api/billing's checkout actions) and the card group (the redirects
 * to the processor) both read and answer, apart from either so neither builds the other's routes.
 */

/** A plan named in a request: a paid plan, or the retired `free` plan that is answered 402 (spec 7). */
export const RequestedPlan = lazySchema(() =>
  z
    .enum([...PlanName().options, 'free'])
    .check(z.describe('`label`, `solo`, `collective` or `network`; the retired `free` plan is answered 402 `PLAN_REQUIRED`')),
);

export const PriceId = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(128), z.regex(/^[A-Za-z0-9_-]+$/, 'a price id')));

export const CheckoutAnswer = lazySchema(() =>
  z.object({
    url: z.url({ protocol: /^https?$/ }).check(z.describe("the card processor's hosted checkout page")),
    sessionId: z.string().check(z.describe('checkout session id at the processor')),
  }),
);

export const CARD_FAILURES =
  '502 `CARD_PROCESSOR_ERROR` when the processor fails; 503 `CARD_NOT_CONFIGURED` when card payments (or this price) are not configured.';
