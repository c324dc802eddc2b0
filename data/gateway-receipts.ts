import { createHash, randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import { serveUnderLease, takeServeLease } from './serve-lease';
import { tx, type TransactItem } from './tenant';

/**
 * Prepaid single-use card receipts of the v1 gateway: a caller without an account pays one call by
 * card; the card webhook stores the receipt (keyed by the hash of its token, never the token), and
 * the gateway redeems it once under a serve lease (data/serve-lease.ts): a plugin failure
 * leaves it redeemable until one call is served.
 *
 *   paid ──(plugin served)──► served
 */

export const GATEWAY_RECEIPT_PREFIX = 'gwr_';
/** A receipt can be redeemed for this long after the payment was confirmed. */
export const GATEWAY_RECEIPT_VALID_SECONDS = 24 * 3600;
/** TTL is late (up to days), so validity is always checked on read too; this is only clean-up. */
const TTL_GRACE_SECONDS = 3600;

/** 32 random bytes: the bearer of the token owns the paid call. */
export const newGatewayReceiptToken = () => `${GATEWAY_RECEIPT_PREFIX}${randomBytes(32).toString('base64url')}`;
export const isGatewayReceiptToken = (token: string) => token.startsWith(GATEWAY_RECEIPT_PREFIX);
export const gatewayReceiptHash = (token: string) => createHash('sha256').update(token).digest('hex');
export const GATEWAY_RECEIPT_HASH = /^[0-9a-f]{64}$/;

export interface GatewayReceipt {
  receiptHash: string;
  plugin: string;
  status: 'paid' | 'served';
  /** The processor's checkout session that paid for it. */
  sessionId: string;
  amountMinor?: number;
  currency?: string;
  paidAt: string;
  /** Epoch ms after which the receipt can no longer be redeemed. */
  redeemableUntil: number;
  leaseUntil?: number;
  leaseId?: string;
}

/** The receipt of a paid checkout, stored once (a second event for the same session changes nothing). */
export function gatewayReceiptItem(paid: Pick<GatewayReceipt, 'receiptHash' | 'plugin' | 'sessionId' | 'amountMinor' | 'currency'>, now: Date): TransactItem {
  const receipt: GatewayReceipt = {
    ...paid,
    status: 'paid',
    paidAt: now.toISOString(),
    redeemableUntil: now.getTime() + GATEWAY_RECEIPT_VALID_SECONDS * 1000,
  };
  const expiresAt = Math.ceil(receipt.redeemableUntil / 1000) + TTL_GRACE_SECONDS;
  return tx.put({ ...keys.gatewayReceipt(paid.receiptHash), ...receipt, expiresAt }, { expression: 'attribute_not_exists(pk)' });
}

export async function readGatewayReceipt(receiptHash: string): Promise<GatewayReceipt | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.gatewayReceipt(receiptHash), ConsistentRead: true }));
  return out.Item as GatewayReceipt | undefined;
}

/** The serve lease of a paid, unexpired receipt for `plugin`; undefined when it is served, expired or another serve holds it. */
export function takeGatewayReceiptLease(receiptHash: string, plugin: string, now = Date.now()): Promise<string | undefined> {
  return takeServeLease(
    keys.gatewayReceipt(receiptHash),
    {
      expression: '#status = :paid AND plugin = :plugin AND redeemableUntil > :now',
      names: { '#status': 'status' },
      values: { ':paid': 'paid', ':plugin': plugin, ':now': now },
    },
    now,
  );
}

/** Runs `serve` under the receipt's lease (data/serve-lease.ts). */
export const serveGatewayReceipt = <T>(receiptHash: string, leaseId: string, serve: () => Promise<T>): Promise<T> =>
  serveUnderLease(keys.gatewayReceipt(receiptHash), leaseId, 'card receipt', serve);
