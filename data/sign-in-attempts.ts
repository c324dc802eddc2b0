import { config, type RateLimitRule } from '#platform/config';
import * as keys from './keys';
import { getGlobal, tenant, transact, tx } from './tenant';

/**
 * Failed password sign-ins, counted in fixed windows (items expired by TTL; the windows and limits
 * are the `signInAddress` and `signInAccount` rate-limit rules): per account and client address (`signInAddress`) and per account across
 * every address (`signInAccount`). Only failures are counted, so nobody can use up an account's
 * budget with sign-ins that succeed, and a success clears the caller's own count.
 */

/** How many of the account's recent successful addresses are kept, and for how long one stays familiar. */
export const KNOWN_ADDRESSES_KEPT = 10;
export const KNOWN_ADDRESS_DAYS = 90;

type Scope = 'signInAddress' | 'signInAccount';

function windowOf(scope: Scope, now: number) {
  const rule: RateLimitRule = config().rateLimits[scope]!;
  const windowMs = rule.windowSeconds * 1000;
  const start = Math.floor(now / windowMs) * windowMs;
  return { rule, start, end: start + windowMs };
}

const subjectOf = (scope: Scope, email: string, ip: string) => (scope === 'signInAddress' ? `account:${email}|ip:${ip}` : `account:${email}`);
const counterKey = (scope: Scope, email: string, ip: string, now: number) =>
  keys.signInFailures(scope, subjectOf(scope, email, ip), windowOf(scope, now).start);

export interface FailureState {
  /** Failures of this account from this address in the current window, and when that window ends (ms). */
  address: { count: number; limit: number; windowEnd: number };
  /** Failures of this account from every address in the current window. */
  account: { count: number; limit: number };
}

export async function signInFailures(email: string, ip: string, now = Date.now()): Promise<FailureState> {
  const read = async (scope: Scope) => {
    const item = await getGlobal<{ count?: number }>(counterKey(scope, email, ip, now), true);
    const { rule, end } = windowOf(scope, now);
    return { count: Number(item?.count ?? 0), limit: rule.limit, windowEnd: end };
  };
  const [address, account] = await Promise.all([read('signInAddress'), read('signInAccount')]);
  return { address, account: { count: account.count, limit: account.limit } };
}

/** One failed attempt: both counters move together in one atomic write. */
export async function recordSignInFailure(email: string, ip: string, now = Date.now()): Promise<void> {
  const bump = (scope: Scope) =>
    tx.update(counterKey(scope, email, ip, now), {
      expression: 'ADD #count :one SET #expiresAt = if_not_exists(#expiresAt, :expiresAt)',
      names: { '#count': 'count', '#expiresAt': 'expiresAt' },
      values: { ':one': 1, ':expiresAt': Math.ceil(windowOf(scope, now).end / 1000) + 60 },
    });
  await transact([bump('signInAddress'), bump('signInAccount')]);
}

type KnownAddressesItem = Record<string, unknown> & { addresses?: { ip: string; at: number }[] };

/** The client addresses the account signed in from successfully in the last KNOWN_ADDRESS_DAYS, newest first. */
export async function knownSignInAddresses(userId: string, now = Date.now()): Promise<{ ip: string; at: number }[]> {
  const item = await tenant(userId).get<KnownAddressesItem>(keys.knownSignInAddresses(userId), true);
  const since = now - KNOWN_ADDRESS_DAYS * 86_400_000;
  return (item?.addresses ?? []).filter((a) => a.at >= since);
}

/** A success: the caller's own failure count is cleared and the address joins the familiar ones. */
export async function recordSignInSuccess(userId: string, email: string, ip: string, known: { ip: string; at: number }[], now = Date.now()): Promise<void> {
  const addresses = [{ ip, at: now }, ...known.filter((a) => a.ip !== ip)].slice(0, KNOWN_ADDRESSES_KEPT);
  await transact([
    tx.delete(counterKey('signInAddress', email, ip, now)),
    tx.put({ ...keys.knownSignInAddresses(userId), addresses, expiresAt: Math.ceil(now / 1000) + KNOWN_ADDRESS_DAYS * 86_400 }),
  ]);
}
