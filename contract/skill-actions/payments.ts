import * as z from 'zod/mini';
import { ResourceId } from '../common';
import type { SkillActionBodies } from './index';
import { lazySchema } from '../route';
import { EVM_ADDRESS } from '../evm';

/**
 * Request bodies of the payments skills (usdc-payments, booking-settlement, instant-split) and of
 * email. Money the client sends as numbers (the spec's booking and split fields)
 * may carry at most 6 decimal places, so it converts to exact integers of micro-units with no
 * rounding; money the platform designs (transfer amounts, limits) travels as decimal strings.
 */
const SIX_DECIMALS = (n: number) => Number.isFinite(n) && Number(n.toFixed(6)) === n;
const Money = lazySchema(() => z.number().check(z.nonnegative(), z.maximum(1e8), z.refine(SIX_DECIMALS, 'at most 6 decimal places')));
const TokenAmount = lazySchema(() =>
  z.string().check(
    z.regex(/^\d{1,9}(\.\d{1,6})?$/, 'a positive decimal amount such as 12.5 (at most 9 whole digits and 6 decimals)'),
    z.refine((s) => /[1-9]/.test(s), 'must be more than 0'),
  ),
);
const Address = lazySchema(() => z.string().check(z.regex(EVM_ADDRESS, 'a 0x-prefixed 20-byte hex address')));
const TxHash = lazySchema(() => z.string().check(z.regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x-prefixed 32-byte transaction hash')));
const Label = lazySchema(() => z.string().check(z.trim(), z.minLength(1), z.maxLength(200)));

// --- usdc-payments ---
/** The daily limit of an account that has not set one, in the payment token. */
export const DEFAULT_DAILY_PAYMENT_LIMIT = '100';

export const usdcPaymentsBodies = lazySchema(() => ({
  send: z
    .strictObject({
      action: z.literal('send'),
      to: Address(),
      amount: TokenAmount(),
      memo: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200))),
    })
    .check(z.describe("an ERC-20 transfer of the payment token from the account's wallet; answers the transfer with its hash, `pending` until confirmed")),
  get_balance: z.strictObject({ action: z.literal('get_balance') }).check(z.describe("the wallet's payment-token balance and what today's limit still allows")),
  set_daily_limit: z
    .strictObject({ action: z.literal('set_daily_limit'), amount: z.string().check(z.regex(/^\d{1,9}(\.\d{1,6})?$/, 'a decimal amount (0 stops all sends)')) })
    .check(z.describe(`the most the account may send per UTC day, in the payment token (default ${DEFAULT_DAILY_PAYMENT_LIMIT})`)),
  status: z
    .strictObject({ action: z.literal('status'), hash: TxHash() })
    .check(z.describe("reads the transfer's receipt and settles it: `confirmed` or `failed`")),
  list: z.strictObject({ action: z.literal('list') }).check(z.describe('every transfer, newest first; pending ones are checked against the chain first')),
}));
export const usdcPaymentsActions: SkillActionBodies = {
  bodies: usdcPaymentsBodies,
  example: { action: 'send', to: '0x1111111111111111111111111111111111111111', amount: '25.50', memo: 'Deposit for 12 July' },
};

// --- booking-settlement ---
/**
 * The booking of a settlement: `guarantee` is the artist's fee, `backend` the percentage (0..100)
 * of the show's net revenue the artist earns instead when that is more ("guarantee versus
 * backend"), `deposit` the part of the guarantee paid into escrow up front.
 */
export const Booking = lazySchema(() =>
  z
    .strictObject({
      guarantee: Money(),
      backend: Money().check(z.maximum(100), z.describe('percentage of the net revenue, 0..100')),
      deposit: Money(),
      netRevenue: z.optional(Money()).check(z.describe("the show's net revenue (after costs); without it the backend earns nothing yet")),
    })
    .check(z.refine((b) => b.deposit <= b.guarantee, { message: 'the deposit cannot exceed the guarantee', path: ['deposit'] })),
);

export const bookingSettlementBodies = lazySchema(() => ({
  list: z.strictObject({ action: z.literal('list') }),
  get: z.strictObject({ action: z.literal('get'), bookingId: ResourceId() }),
  create_escrow: z.strictObject({ action: z.literal('create_escrow'), bookingId: ResourceId(), booking: Booking() }),
  release_funds: z
    .strictObject({ action: z.literal('release_funds'), bookingId: ResourceId(), netRevenue: z.optional(Money()) })
    .check(z.describe('releases the escrow once and settles the booking; a second release answers 409 ALREADY_RELEASED')),
  simulate_settlement: z
    .strictObject({ action: z.literal('simulate_settlement'), booking: Booking() })
    .check(z.describe('pure computation: nothing is stored')),
}));
export const bookingSettlementActions: SkillActionBodies = {
  bodies: bookingSettlementBodies,
  example: { action: 'simulate_settlement', booking: { guarantee: 1500, backend: 70, deposit: 500 } },
};

// --- instant-split ---
export const SPLIT_MAX_RECIPIENTS = 50;
const SplitRecipient = lazySchema(() =>
  z.strictObject({
    recipientAddress: Address(),
    percentage: z.number().check(z.gt(0), z.maximum(100), z.refine(SIX_DECIMALS, 'at most 6 decimal places')),
    role: z.optional(Label()),
    name: z.optional(Label()),
  }),
);

export const instantSplitBodies = lazySchema(() => ({
  create_split_rule: z
    .strictObject({
      action: z.literal('create_split_rule'),
      splits: z.union([SplitRecipient(), z.array(SplitRecipient()).check(z.minLength(1), z.maxLength(SPLIT_MAX_RECIPIENTS))]),
      threshold: z.optional(Money()).check(z.describe('the smallest amount (payment token) an execution may split; default 0')),
    })
    .check(z.describe('the percentages must total exactly 100, each recipient once')),
  list_pending: z.strictObject({ action: z.literal('list_pending') }).check(z.describe('split rules and every leg not yet confirmed on chain')),
  get_balance: z.strictObject({ action: z.literal('get_balance') }).check(z.describe("the wallet's payment-token balance and each rule's threshold")),
  execute_split: z
    .strictObject({
      action: z.literal('execute_split'),
      splitId: ResourceId(),
      amount: z.optional(TokenAmount()).check(z.describe("default: the wallet's whole balance")),
    })
    .check(z.describe('pays each recipient its share once; a retry resumes the same execution and never pays a leg twice')),
  simulate: z
    .strictObject({
      action: z.literal('simulate'),
      streams: z.number().check(z.int(), z.nonnegative(), z.maximum(1e12)),
      rate: Money().check(z.describe('payout per stream')),
      splitId: z.optional(ResourceId()).check(z.describe('a rule to split the revenue by; without it only the revenue is computed')),
    })
    .check(z.describe('pure computation: revenue = streams × rate, and each recipient’s share')),
}));
export const instantSplitActions: SkillActionBodies = {
  bodies: instantSplitBodies,
  example: {
    action: 'create_split_rule',
    splits: [
      { recipientAddress: '0x1111111111111111111111111111111111111111', percentage: 60, role: 'artist', name: 'Nova Lane' },
      { recipientAddress: '0x2222222222222222222222222222222222222222', percentage: 40, role: 'producer', name: 'K. Ito' },
    ],
    threshold: 100,
  },
};

// --- email ---
/** Messages an account may send per UTC day, by plan (admins and accounts without a plan: `label`). */
export const EMAIL_DAILY_LIMITS = { label: 50, solo: 200, collective: 1000, network: 5000 } as const;
export const EMAIL_MAX_RECIPIENTS = 10;

export const emailBodies = lazySchema(() => ({
  send: z
    .strictObject({
      action: z.literal('send'),
      to: z.union([z.email(), z.array(z.email()).check(z.minLength(1), z.maxLength(EMAIL_MAX_RECIPIENTS))]),
      subject: z.string().check(
        z.trim(),
        z.minLength(1),
        z.maxLength(200),
        z.refine((s) => !/[\r\n]/.test(s), 'one line'),
      ),
      body: z.string().check(z.minLength(1), z.maxLength(50_000)),
    })
    .check(z.describe('one message per recipient, each counted against the daily limit of the plan')),
  list: z
    .strictObject({ action: z.literal('list'), limit: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(100))) })
    .check(z.describe('the audit records, newest first')),
  usage: z.strictObject({ action: z.literal('usage') }).check(z.describe("today's sends against the plan's daily limit")),
}));
export const emailActions: SkillActionBodies = {
  bodies: emailBodies,
  example: { action: 'send', to: 'promoter@example.com', subject: 'Hold for 12 July', body: 'Can we confirm the hold?' },
};
