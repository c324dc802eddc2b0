import * as keys from './keys';
import { tenant } from './tenant';

/**
 * Bring-your-own provider keys, one item per provider at `USER#<id> / BYOK#<provider>`. The key is
 * stored sealed (envelope encryption bound to the user and provider), with a fingerprint and the
 * preview of its last characters that is all a client is ever shown.
 */
export interface StoredProviderKey extends Record<string, unknown> {
  provider: string;
  /** The sealed key (an envelope record). */
  key: unknown;
  fingerprint: string;
  keyPreview: string;
  createdAt: string;
  updatedAt: string;
}

export const listProviderKeys = (userId: string) => tenant(userId).queryAll<StoredProviderKey>(keys.byokPrefix);

/** Stores or replaces the provider's key; `createdAt` stays the first store's. */
export async function storeProviderKey(
  userId: string,
  provider: string,
  sealed: unknown,
  fingerprint: string,
  keyPreview: string,
  now = new Date(),
): Promise<void> {
  await tenant(userId).update(keys.byok(userId, provider), {
    expression: 'SET provider = :provider, #key = :key, fingerprint = :fp, keyPreview = :preview, updatedAt = :now, createdAt = if_not_exists(createdAt, :now)',
    names: { '#key': 'key' },
    values: { ':provider': provider, ':key': sealed, ':fp': fingerprint, ':preview': keyPreview, ':now': now.toISOString() },
  });
}

/** Deletes the provider's key; false when none was stored. */
export async function deleteProviderKey(userId: string, provider: string): Promise<boolean> {
  return (await tenant(userId).delete(keys.byok(userId, provider))) !== undefined;
}
