import { decrypt, type EnvelopeRecord } from '#platform/crypto/envelope';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';

/**
 * Users' own provider keys (billing `enable-byok`), sealed with envelope encryption bound to the
 * user and provider, so a copied record opens for no one else.
 */

export const byokContext = (userId: string, provider: string) => ({ userId, purpose: `byok:${provider}` });

interface StoredByok extends Record<string, unknown> {
  provider: string;
  key: EnvelopeRecord;
}

/** provider → plaintext key, for this call only; never logged or stored elsewhere. */
export async function userProviderKeys(userId: string): Promise<Record<string, string>> {
  const items = await tenant(userId).queryAll<StoredByok>(keys.byokPrefix);
  const out: Record<string, string> = {};
  await Promise.all(items.map(async (i) => (out[i.provider] = (await decrypt(i.key, byokContext(userId, i.provider))).toString('utf8'))));
  return out;
}
