/**
 * The card processor's SDK (stripe-node, which is large), imported by card.ts and card-local.ts
 * on their first processor call or webhook check, not at init: billing reads and the card routes
 * that answer before calling the processor never pay for evaluating it.
 */
export { default as Stripe } from 'stripe';
