import { decrypt, type EnvelopeRecord } from '#platform/crypto/envelope';
import { listProviderKeys } from '#data/byok';

/**
 * Users' own provider keys (billing `enable-byok`), sealed with envelope encryption bound to the
 * user and provider, so a copied record opens for no one else.
 */

export const byokContext = (userId: string, provider: string) => ({ userId, purpose: `byok:${provider}` });

/** provider → plaintext key, for this call only; never logged or stored elsewhere. */
export async function userProviderKeys(userId: string): Promise<Record<string, string>> {
  const items = await listProviderKeys(userId);
  const out: Record<string, string> = {};
  await Promise.all(items.map(async (i) => (out[i.provider] = (await decrypt(i.key as EnvelopeRecord, byokContext(userId, i.provider))).toString('utf8'))));
  return out;
}
