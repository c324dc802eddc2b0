import { fromMicros } from './decimal';

/**
 * Pure money arithmetic of the payments skills, in exact integers of micro-units (6 decimals):
 * numbers from a request (at most 6 decimal places, checked by the contract) become micros through
 * their fixed-point text, products are divided once and rounded half up, so no binary floating
 * point ever touches a figure.
 */
export const MICROS = 1_000_000n;

/** A request number with at most 6 decimals, exactly, as micro-units. */
export const numberToMicros = (n: number): bigint => {
  const [whole, fraction = ''] = n.toFixed(6).split('.');
  return BigInt(whole!) * MICROS + BigInt(fraction);
};

/** a × b ÷ divisor, rounded half up (non-negative operands). */
export const mulDivRound = (a: bigint, b: bigint, divisor: bigint): bigint => (a * b * 2n + divisor) / (2n * divisor);

const money = (micros: bigint) => fromMicros(micros);

/**
 * The settlement rule of booking-settlement ("guarantee versus backend"):
 *   backendEarnings = netRevenue × backend% (backend is a percentage, 0..100)
 *   artistPayout    = the larger of guarantee and backendEarnings
 *   balanceDue      = artistPayout − deposit (the deposit is already in escrow; the promoter pays the rest)
 *   promoterNet     = netRevenue − artistPayout (negative when the show lost money)
 * Without a net revenue the backend earns nothing and the artist gets the guarantee.
 */
export interface BookingTerms {
  guarantee: bigint;
  backendPercent: bigint;
  deposit: bigint;
}

export const bookingTerms = (b: { guarantee: number; backend: number; deposit: number }): BookingTerms => ({
  guarantee: numberToMicros(b.guarantee),
  backendPercent: numberToMicros(b.backend),
  deposit: numberToMicros(b.deposit),
});

export function settle({ guarantee, backendPercent, deposit }: BookingTerms, netRevenue = 0n) {
  const backendEarnings = mulDivRound(netRevenue, backendPercent, 100n * MICROS);
  const backendWins = backendEarnings > guarantee;
  const artistPayout = backendWins ? backendEarnings : guarantee;
  return {
    payoutMicros: artistPayout,
    figures: {
      guarantee: money(guarantee),
      backendPercent: money(backendPercent),
      netRevenue: money(netRevenue),
      backendEarnings: money(backendEarnings),
      artistPayout: money(artistPayout),
      deposit: money(deposit),
      balanceDue: money(artistPayout - deposit),
      promoterNet: money(netRevenue - artistPayout),
      dealPaid: backendWins ? 'backend' : 'guarantee',
    },
  };
}

/**
 * Shares of an amount by percentages that total 100: each share is rounded down to the unit, and
 * the units left over (fewer than the number of recipients) go to the first recipient, so the
 * shares always add up to the amount exactly.
 */
export function splitShares(amount: bigint, percentagesMicros: bigint[]): bigint[] {
  const shares = percentagesMicros.map((p) => (amount * p) / (100n * MICROS));
  const remainder = amount - shares.reduce((a, b) => a + b, 0n);
  if (shares.length) shares[0]! += remainder;
  return shares;
}
