/**
 * The card processor's SDK (stripe-node, ~250 KB minified), imported by card.ts and card-local.ts
 * on their first processor call or webhook check, not at init: billing reads and the card routes
 * that answer before calling the processor never evaluate it (issue 16).
 */
export { default as Stripe } from 'stripe';
