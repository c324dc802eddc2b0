import { cardConfig } from '#platform/config';

/**
 * The credit packs on sale, apart from the card adapter so that the billing reads that list them
 * do not bundle the processor's SDK (stripe).
 */

/** Credit packs on sale: price id → credits. Only these ids are ever sent to the processor. */
export const creditPacks = () => cardConfig().creditPrices;

/** Own keys only: a client-chosen `constructor` or `__proto__` is no pack. */
export const creditsOfPrice = (priceId: string): number | undefined => (Object.hasOwn(creditPacks(), priceId) ? creditPacks()[priceId] : undefined);
