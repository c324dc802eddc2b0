import * as keys from './keys';
import { ConditionFailedError, tenant } from './tenant';

/**
 * Passkeys (WebAuthn credentials) a user registered, and the challenges of the ceremonies in
 * flight. A challenge is single use: taking it deletes it, so a replayed response finds none.
 */

export const WEBAUTHN_CHALLENGE_TTL_SECONDS = 300;

export type StoredPasskey = {
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports?: string[];
  createdAt: string;
};

export async function saveWebauthnChallenge(userId: string, purpose: string, challenge: string, now = Date.now()): Promise<void> {
  const expiresAt = Math.ceil(now / 1000) + WEBAUTHN_CHALLENGE_TTL_SECONDS;
  await tenant(userId).put({ ...keys.webauthnChallenge(userId, purpose), challenge, expiresAt });
}

/** The challenge of `purpose`, deleted as it is read; undefined when there is none or it expired (TTL deletion lags, so expiry is checked here). */
export async function takeWebauthnChallenge(userId: string, purpose: string, now = Date.now()): Promise<string | undefined> {
  const item = await tenant(userId).delete<{ challenge: string; expiresAt: number }>(keys.webauthnChallenge(userId, purpose));
  if (!item || item.expiresAt * 1000 <= now) return undefined;
  return item.challenge;
}

export async function savePasskey(userId: string, passkey: StoredPasskey): Promise<boolean> {
  try {
    await tenant(userId).put({ ...keys.webauthnCredential(userId, passkey.credentialId), ...passkey }, { expression: 'attribute_not_exists(pk)' });
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export async function passkeysOf(userId: string): Promise<StoredPasskey[]> {
  return tenant(userId).queryAll<StoredPasskey>(keys.webauthnCredentialPrefix, { consistent: true });
}

export async function getPasskey(userId: string, credentialId: string): Promise<StoredPasskey | undefined> {
  return tenant(userId).get<StoredPasskey>(keys.webauthnCredential(userId, credentialId), true);
}

/** Moves the signature counter forward only from the value the assertion was checked against, so two uses of one assertion cannot both pass. */
export async function advancePasskeyCounter(userId: string, credentialId: string, from: number, to: number): Promise<boolean> {
  try {
    await tenant(userId).update(
      keys.webauthnCredential(userId, credentialId),
      {
        expression: 'SET #counter = :to, #usedAt = :usedAt',
        names: { '#counter': 'counter', '#usedAt': 'usedAt' },
        values: { ':to': to, ':usedAt': new Date().toISOString() },
      },
      { expression: '#counter = :from', values: { ':from': from } },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}
