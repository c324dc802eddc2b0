import { createHash } from 'node:crypto';
import { byokContext } from '#domain/ai/byok';
import { encrypt, KeyCustodyConfigError } from '#platform/crypto/envelope';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { HttpError, notFound } from '#http/errors';

/**
 * Bring-your-own-key: a user's own AI provider key, one item per provider. The key is sealed with
 * envelope encryption bound to the user and provider (context {userId, purpose: byok:<provider>}),
 * so a copied record opens for no one else; only its last four characters are ever shown.
 */
interface ByokItem {
  provider: string;
  key: unknown;
  fingerprint: string;
  keyPreview: string;
  createdAt: string;
  updatedAt: string;
}

export async function byokState(userId: string) {
  const items = await tenant(userId).queryAll<ByokItem & Record<string, unknown>>(keys.byokPrefix);
  const providers = items.map((i) => ({ provider: i.provider, keyPreview: i.keyPreview, updatedAt: i.updatedAt }));
  return { enabled: providers.length > 0, providers };
}

export async function enableByok(userId: string, provider: string, apiKey: string, now = new Date()) {
  let sealed;
  try {
    sealed = await encrypt(apiKey, byokContext(userId, provider));
  } catch (err) {
    if (err instanceof KeyCustodyConfigError) throw new HttpError(503, 'key storage is not configured', 'KEY_CUSTODY_NOT_CONFIGURED', { setup: err.setup });
    throw err;
  }
  const at = now.toISOString();
  await tenant(userId).update(keys.byok(userId, provider), {
    expression: 'SET provider = :provider, #key = :key, fingerprint = :fp, keyPreview = :preview, updatedAt = :now, createdAt = if_not_exists(createdAt, :now)',
    names: { '#key': 'key' },
    values: {
      ':provider': provider,
      ':key': sealed,
      ':fp': createHash('sha256').update(apiKey).digest('hex'),
      ':preview': `…${apiKey.slice(-4)}`,
      ':now': at,
    },
  });
  return { success: true as const, byok: await byokState(userId) };
}

export async function disableByok(userId: string, provider: string) {
  const removed = await tenant(userId).delete(keys.byok(userId, provider));
  if (!removed) throw notFound(`no ${provider} key is stored`);
  return { success: true as const, byok: await byokState(userId) };
}
