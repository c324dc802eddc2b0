import { config } from '#platform/config';

/** What an account may do beyond its plan: admins run free at the largest plan, testers skip the paywall. */
export interface AccountRights {
  isAdmin: boolean;
  isTester: boolean;
}

/** The account as the rights are judged: its address now, and whether it has proven it. */
export interface RightsSubject {
  email: string;
  emailVerified?: boolean;
}

const listedAs = (list: readonly string[], email: string) => list.includes(email.toLowerCase());

/**
 * The one place admin and tester rights are derived. A listed address carries them only once the
 * account has proven it: anyone may register an address nobody holds yet, so the address alone
 * proves nothing. Every caller (sessions, API keys, the instance, skills) asks here.
 */
export function accountRights(account: RightsSubject | undefined): AccountRights {
  if (account?.emailVerified !== true) return { isAdmin: false, isTester: false };
  const { adminEmails, testerEmails } = config();
  return { isAdmin: listedAs(adminEmails, account.email), isTester: listedAs(testerEmails, account.email) };
}

/**
 * Whether an address is on the admin or tester list, proven or not: such an address is reserved (no
 * one may move an account onto it) and its sessions re-read the proof. Grants nothing by itself.
 */
export const isListedAddress = (email: string) => {
  const { adminEmails, testerEmails } = config();
  return listedAs(adminEmails, email) || listedAs(testerEmails, email);
};
