import * as z from 'zod/mini';
import { canonicalContext, defaultKeyProvider, keyProvider, openGcm, sealGcm, UnwrapError, type EncryptionContext } from './key-providers';
import { lazySchema } from '#contract/lazy-schema';

/**
 * Envelope encryption of secrets at rest (wallet private keys, agent gateway tokens): every record
 * gets a fresh 256-bit data key, the payload is AES-256-GCM under it with the canonical JSON of the
 * context as additional data, and the data key is wrapped by KMS (EncryptionContext = the context)
 * or, without KMS, by the local master key in the same format. A record therefore opens only for the
 * user (and purpose) it was sealed for, and any changed byte is refused.
 */
export type { EncryptionContext } from './key-providers';
export { KeyCustodyConfigError, keyCustodyStatus } from './key-providers';

const b64 = lazySchema(() => z.base64());

export const EnvelopeRecordSchema = lazySchema(() =>
  z.object({
    v: z.literal(1),
    alg: z.literal('A256GCM'),
    keyProvider: z.enum(['kms', 'local']),
    wrappedKey: b64(),
    iv: b64(),
    tag: b64(),
    ciphertext: b64(),
  }),
);
export type EnvelopeRecord = z.infer<ReturnType<typeof EnvelopeRecordSchema>>;

/** The record does not open under this context: tampered, another user's, or not a record at all. */
export class EnvelopeError extends Error {}

const ContextSchema = lazySchema(() => z.strictObject({ userId: z.string().check(z.minLength(1)), purpose: z.string().check(z.minLength(1)) }));

function checkedContext(context: EncryptionContext): EncryptionContext {
  const parsed = ContextSchema().safeParse(context);
  if (!parsed.success) throw new EnvelopeError('encryption context must be {userId, purpose}');
  return parsed.data;
}

/**
 * Unwrapped data keys of this container, so steady-state reads make no KMS call (docs/architecture.md §11).
 * Keyed by provider, context and wrapped key: a hit needs the very context the key was unwrapped under.
 */
const CACHE_SIZE = 128;
const dataKeys = new Map<string, Buffer>();

function cacheGet(id: string): Buffer | undefined {
  const key = dataKeys.get(id);
  if (key) {
    dataKeys.delete(id);
    dataKeys.set(id, key);
  }
  return key;
}

function cachePut(id: string, key: Buffer): void {
  dataKeys.delete(id);
  dataKeys.set(id, Buffer.from(key));
  while (dataKeys.size > CACHE_SIZE) {
    const oldest = dataKeys.keys().next().value!;
    dataKeys.get(oldest)!.fill(0);
    dataKeys.delete(oldest);
  }
}

/** Tests that need to count provider calls from a cold container. */
export function clearDataKeyCache(): void {
  for (const key of dataKeys.values()) key.fill(0);
  dataKeys.clear();
}

const cacheId = (provider: string, aad: string, wrappedKey: string) => `${provider}\n${aad}\n${wrappedKey}`;

export async function encrypt(plaintext: Uint8Array | string, context: EncryptionContext): Promise<EnvelopeRecord> {
  const ctx = checkedContext(context);
  const aad = canonicalContext(ctx);
  const provider = defaultKeyProvider();
  const { plaintext: dataKey, wrapped } = await provider.generateDataKey(ctx);
  try {
    const data = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : Buffer.from(plaintext);
    const sealed = sealGcm(dataKey, data, aad);
    const wrappedKey = wrapped.toString('base64');
    cachePut(cacheId(provider.name, aad, wrappedKey), dataKey);
    return {
      v: 1,
      alg: 'A256GCM',
      keyProvider: provider.name,
      wrappedKey,
      iv: sealed.iv.toString('base64'),
      tag: sealed.tag.toString('base64'),
      ciphertext: sealed.ciphertext.toString('base64'),
    };
  } finally {
    dataKey.fill(0);
  }
}

export async function decrypt(record: EnvelopeRecord, context: EncryptionContext): Promise<Buffer> {
  const ctx = checkedContext(context);
  const parsed = EnvelopeRecordSchema().safeParse(record);
  if (!parsed.success) throw new EnvelopeError('not an envelope record');
  const r = parsed.data;
  const aad = canonicalContext(ctx);
  const id = cacheId(r.keyProvider, aad, r.wrappedKey);
  let dataKey = cacheGet(id);
  if (!dataKey) {
    try {
      dataKey = await keyProvider(r.keyProvider).unwrap(Buffer.from(r.wrappedKey, 'base64'), ctx);
    } catch (err) {
      if (err instanceof UnwrapError) throw new EnvelopeError('record does not open under this context');
      throw err;
    }
    cachePut(id, dataKey);
    dataKey.fill(0);
    dataKey = cacheGet(id)!;
  }
  try {
    return openGcm(dataKey, { iv: Buffer.from(r.iv, 'base64'), tag: Buffer.from(r.tag, 'base64'), ciphertext: Buffer.from(r.ciphertext, 'base64') }, aad);
  } catch {
    throw new EnvelopeError('record does not open under this context');
  }
}
