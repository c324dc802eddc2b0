import { CARD_CURRENCY, CARD_MINIMUM_CHARGE_MINOR, gatewayConfig } from '#platform/config';
import type { GatewayPluginId } from '#contract/gateway';
import { gatewayReceiptHash, readGatewayReceipt, serveGatewayReceipt, takeGatewayReceiptLease } from '#data/gateway-receipts';
import { PaymentRefusedError } from './errors';

/**
 * The card price of one gateway call. Gateway prices are in the payment token (a USD stablecoin,
 * TIP-20, 6 decimals); a one-off card checkout charges the card billing currency (GBP, 2 decimals).
 * The rule: GATEWAY_CARD_PRICES names a plugin's price in pence; otherwise the token price times
 * GATEWAY_CARD_RATE (default 1, which never charges less than the token price), rounded UP to a whole
 * penny, and never below the processor's minimum charge. Integer arithmetic only: money is never a float.
 */

/** TIP-20 tokens have 6 decimals (draft-tempo-charge-00). */
export const TIP20_DECIMALS = 6;
const RATE_DECIMALS = 6;
const CARD_CURRENCY_DECIMALS = 2;

export interface GatewayCardPrice {
  /** Minor units (pence), as the processor is sent them. */
  minor: number;
  currency: string;
  /** The same price in currency units, as the 402 challenge shows it (`card.amount`). */
  amount: number;
}

/**
 * A decimal string as an integer count of 10^-decimals units: viem's `parseUnits` for the inputs the
 * settings accept (prices and rates with at most 6 decimals, validated in platform/config.ts), written
 * here because the card function and the gateway's 402 answer need nothing else of viem and
 * so do not load it. Refuses what it would have to round.
 */
export function decimalToUnits(decimal: string, decimals: number): bigint {
  const parts = /^(\d+)(?:\.(\d+))?$/.exec(decimal);
  const fraction = parts?.[2] ?? '';
  if (!parts || fraction.length > decimals) throw new RangeError(`not a decimal with at most ${decimals} decimals: ${decimal}`);
  return BigInt(parts[1]! + fraction.padEnd(decimals, '0'));
}

/** Minor units (pence) as currency units. An integer over a power of ten is the double nearest the exact decimal, as viem's `formatUnits` text parsed by `Number` is. */
export const minorToAmount = (minor: number): number => minor / 10 ** CARD_CURRENCY_DECIMALS;

/** token amount × rate, in minor units of the card currency, rounded up. */
export function tokenToCardMinor(tokenAmount: string, rate: string): bigint {
  const scaled = decimalToUnits(tokenAmount, TIP20_DECIMALS) * decimalToUnits(rate, RATE_DECIMALS);
  const divisor = 10n ** BigInt(TIP20_DECIMALS + RATE_DECIMALS - CARD_CURRENCY_DECIMALS);
  return (scaled + divisor - 1n) / divisor;
}

export function gatewayCardPrice(plugin: GatewayPluginId): GatewayCardPrice {
  const { prices, card } = gatewayConfig();
  const converted = tokenToCardMinor(prices[plugin]!, card.rate);
  const minor = card.prices[plugin] ?? Number(converted < CARD_MINIMUM_CHARGE_MINOR ? BigInt(CARD_MINIMUM_CHARGE_MINOR) : converted);
  return { minor, currency: CARD_CURRENCY, amount: minorToAmount(minor) };
}

const alreadyUsed = () => new PaymentRefusedError('ALREADY_USED', 'this card receipt has already paid for a call');

/**
 * Redeems a prepaid card receipt (its token) for one serve of `plugin`: checked, then leased by a
 * DynamoDB condition, so of parallel redemptions exactly one serves; if `serve` fails the receipt
 * stays redeemable, once served it never is again.
 */
export async function redeemGatewayReceipt<T>(token: string, plugin: string, serve: (paidBy: { payer: string; reference: string }) => Promise<T>): Promise<T> {
  const receiptHash = gatewayReceiptHash(token);
  const receipt = await readGatewayReceipt(receiptHash);
  const now = Date.now();
  if (!receipt) {
    throw new PaymentRefusedError('UNKNOWN_RECEIPT', 'this card receipt is unknown, or its payment is not confirmed yet: retry a few seconds after paying');
  }
  if (receipt.status === 'served') throw alreadyUsed();
  if (receipt.plugin !== plugin) throw new PaymentRefusedError('WRONG_PLUGIN', `this card receipt pays for the ${receipt.plugin} plugin`);
  if (receipt.redeemableUntil <= now) throw new PaymentRefusedError('EXPIRED', 'this card receipt has expired');
  const leaseId = await takeGatewayReceiptLease(receiptHash, plugin, now);
  if (!leaseId) throw alreadyUsed();
  // Usage is metered per payer: a guest card payment is its own payer, named by its checkout session.
  const paidBy = { payer: `card:${receipt.sessionId}`, reference: receipt.sessionId };
  return serveGatewayReceipt(receiptHash, leaseId, () => serve(paidBy));
}
