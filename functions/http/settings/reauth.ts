import type { AuthContext } from '#domain/auth/authenticate';
import { checkPassword } from '#domain/auth/passwords';
import type { UserProfile } from '#data/users';
import { unauthenticated } from '#platform/errors';

/** A session signed in this recently may do sensitive things without typing the password again. */
export const FRESH_SESSION_SECONDS = 10 * 60;

export const wrongPassword = () => unauthenticated('wrong password', 'INVALID_PASSWORD');
const reauthRequired = () => unauthenticated('confirm with your password, or sign in again and retry within 10 minutes', 'REAUTH_REQUIRED');

export const sessionIsFresh = (auth: AuthContext, now = Date.now()) =>
  auth.via !== 'apiKey' && auth.issuedAt !== undefined && now / 1000 - auth.issuedAt <= FRESH_SESSION_SECONDS;

/**
 * Proof that the person at the keyboard owns the account: the password when one is given (or when
 * `passwordOnly` and the account has one), else a fresh session. Accounts without a password
 * (OAuth, wallet) can only use a fresh session.
 */
export async function confirmOwner(auth: AuthContext, user: UserProfile, password: string | undefined, opts: { passwordOnly?: boolean } = {}): Promise<void> {
  if (password !== undefined) {
    if (!(await checkPassword(user.passwordHash, password))) throw wrongPassword();
    return;
  }
  if (opts.passwordOnly && user.passwordHash) throw unauthenticated('the current password is required', 'CURRENT_PASSWORD_REQUIRED');
  if (!sessionIsFresh(auth)) throw reauthRequired();
}
