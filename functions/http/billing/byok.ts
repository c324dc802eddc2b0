import { createHash } from 'node:crypto';
import { byokContext } from '#domain/ai/byok';
import { encrypt, KeyCustodyConfigError } from '#platform/crypto/envelope';
import { deleteProviderKey, listProviderKeys, storeProviderKey } from '#data/byok';
import { notFound, unavailable } from '#platform/errors';

/**
 * Bring-your-own-key: a user's own AI provider key, one item per provider. The key is sealed with
 * envelope encryption bound to the user and provider (context {userId, purpose: byok:<provider>}),
 * so a copied record opens for no one else; only its last four characters are ever shown.
 */
export async function byokState(userId: string) {
  const items = await listProviderKeys(userId);
  const providers = items.map((i) => ({ provider: i.provider, keyPreview: i.keyPreview, updatedAt: i.updatedAt }));
  return { enabled: providers.length > 0, providers };
}

export async function enableByok(userId: string, provider: string, apiKey: string, now = new Date()) {
  let sealed;
  try {
    sealed = await encrypt(apiKey, byokContext(userId, provider));
  } catch (err) {
    if (err instanceof KeyCustodyConfigError)
      throw unavailable('key storage is not configured', 'KEY_CUSTODY_NOT_CONFIGURED', { setup: err.setup }, { cause: err });
    throw err;
  }
  await storeProviderKey(userId, provider, sealed, createHash('sha256').update(apiKey).digest('hex'), `…${apiKey.slice(-4)}`, now);
  return { success: true as const, byok: await byokState(userId) };
}

export async function disableByok(userId: string, provider: string) {
  if (!(await deleteProviderKey(userId, provider))) throw notFound(`no ${provider} key is stored`);
  return { success: true as const, byok: await byokState(userId) };
}
