import { emitEvent, userEventData } from '#adapters/events-queue';
import { ConditionFailedError } from '#data/failures';
import { transact, type TransactItem } from '#data/writes';
import {
  createUser,
  dropStaleLookup,
  EmailTakenError,
  findUserIdByEmail,
  getUser,
  type IdentityLookup,
  isDerivedEmail,
  linkedProfileItem,
  type LoginIdentity,
  type UserProfile,
  userIdOfLookup,
} from '#data/users';
import { DomainError } from '#platform/errors';
import { logger } from '#platform/logger';

/**
 * An identity proven by someone else (an OAuth provider, a wallet signature, a social identity
 * token) that signs a user in. `lookup` is its global `LOGIN#...` item pointing at the user.
 */
export interface ExternalIdentity {
  lookup: IdentityLookup;
  /** Items that link the identity to an account: the look-up (only if absent) and its marker in the owner's partition. */
  linkItems: (userId: string) => TransactItem[];
  /** Identities createUser can link in its own transaction (wallet, OAuth); others are linked right after. */
  login?: LoginIdentity;
  /** Email of a new account: a verified address or one derived from the identity. */
  email: string;
  /**
   * Whether an account that already has `email` may be linked to this identity: true only for an
   * email the provider verified (spec 4.1 rule 1) or a derived one (rule 2); never for an
   * unverified address, which would hand someone else's account to whoever typed it.
   */
  linkByEmail: boolean;
  /** The provider verified `email` (an OAuth identity's confirmed address): a new account starts with it proven. */
  emailVerified?: boolean;
  name?: string;
  walletAddress?: string;
  /** Named in the `user.created` event. */
  method: 'codehost' | 'webid' | 'wallet' | 'social';
}

export interface SignedInIdentity {
  user: UserProfile;
  created: boolean;
}

/** Races (two first sign-ins of one identity) settle in the database; each retry re-reads what won. */
const ATTEMPTS = 4;

/**
 * Finds the account of an identity, links it to the account with the same (linkable) email, or
 * creates one. Every step is a conditional write, so concurrent first sign-ins of one identity end
 * with exactly one account.
 */
export async function signInWithIdentity(identity: ExternalIdentity): Promise<SignedInIdentity> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const linked = await linkedUser(identity.lookup);
    if (linked) return { user: linked, created: false };

    if (identity.linkByEmail) {
      const owner = await findUserIdByEmail(identity.email);
      if (owner) {
        await refuseUnprovenOwner(identity, owner);
        const user = (await link(identity, owner)) ? await getUser(owner, true) : undefined;
        if (user) return { user, created: false };
        continue;
      }
    }

    const created = await create(identity);
    if (created) return { user: created, created: true };
  }
  throw new DomainError('conflict', 'this sign-in conflicts with another account; try again', 'IDENTITY_CONFLICT');
}

/**
 * An account whose address nobody proved may be someone who registered a victim's address first
 * to receive the victim's later OAuth sign-in (pre-hijacking): it is never linked. Its owner
 * proves the address (the emailed link, or a password reset, which also evicts whoever else holds
 * the password) and signs in with the provider again. Derived addresses cannot be registered, so
 * they need no proof.
 */
async function refuseUnprovenOwner(identity: ExternalIdentity, ownerId: string): Promise<void> {
  if (isDerivedEmail(identity.email)) return;
  const owner = await getUser(ownerId, true);
  if (owner && owner.emailVerified !== true) {
    throw new DomainError(
      'conflict',
      'an account with this email exists but its address was never confirmed; confirm it (or reset its password from the emailed link), then sign in with the provider again',
      'EMAIL_UNVERIFIED',
    );
  }
}

/** The account the look-up points at; a look-up left behind by a deleted account is removed. */
async function linkedUser(lookup: IdentityLookup): Promise<UserProfile | undefined> {
  const userId = await userIdOfLookup(lookup);
  if (!userId) return undefined;
  const user = await getUser(userId, true);
  if (user) return user;
  await dropStaleLookup(lookup, userId);
  return undefined;
}

async function link(identity: ExternalIdentity, userId: string): Promise<boolean> {
  try {
    await transact([...identity.linkItems(userId), linkedProfileItem(userId, identity.walletAddress)]);
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
  logger().info('sign-in identity linked to an existing account', { userId, method: identity.method });
  return true;
}

async function create(identity: ExternalIdentity): Promise<UserProfile | undefined> {
  let user: UserProfile;
  try {
    user = await createUser({
      email: identity.email,
      name: identity.name,
      walletAddress: identity.walletAddress,
      emailVerified: identity.emailVerified === true,
      logins: identity.login ? [identity.login] : undefined,
    });
  } catch (err) {
    if (!(err instanceof EmailTakenError)) throw err;
    // Someone else's account holds the email and this identity may not claim it.
    if (!identity.linkByEmail && !(await userIdOfLookup(identity.lookup))) {
      throw new DomainError('conflict', 'an account with this email already exists; sign in to it first', 'USER_EXISTS');
    }
    return undefined;
  }
  // Identities createUser cannot link itself; if this fails, the derived email links on the next try.
  if (!identity.login) await link(identity, user.userId);
  await emitEvent('user.created', userEventData(user, { method: identity.method }));
  return user;
}
