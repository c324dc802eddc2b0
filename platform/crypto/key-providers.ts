import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { kms } from '../aws/kms-client';
import { config, keyCustodyConfig } from '../config';

/**
 * Who wraps the per-record data keys: KMS in AWS, a local master key file where there is no KMS
 * (the local stack, tests). Both bind the wrapped key to the encryption context, so a data key
 * wrapped for one user cannot be unwrapped under another user's context.
 */
export type KeyProviderName = 'kms' | 'local';

export interface EncryptionContext {
  userId: string;
  purpose: string;
}

export interface KeyProvider {
  readonly name: KeyProviderName;
  generateDataKey(context: EncryptionContext): Promise<{ plaintext: Buffer; wrapped: Buffer }>;
  unwrap(wrapped: Buffer, context: EncryptionContext): Promise<Buffer>;
}

/** The wrapped key (or its context) does not hold: tampered, wrong user, or another key. */
export class UnwrapError extends Error {}

/** Key custody is not set up where this code runs (no KMS key in AWS, unreadable master key). */
export class KeyCustodyConfigError extends Error {
  constructor(
    message: string,
    /** Names of the settings to fix, never their values. */
    readonly setup: string,
  ) {
    super(message);
  }
}

const KMS_SETUP = 'set KMS_KEY_ID to the KMS key that wraps data keys';
export const DATA_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The context as canonical JSON (sorted keys): the GCM additional data that binds a ciphertext to its owner. */
export function canonicalContext(context: EncryptionContext): string {
  const c = context as unknown as Record<string, unknown>;
  return JSON.stringify(
    Object.fromEntries(
      Object.keys(c)
        .sort()
        .map((k) => [k, c[k]]),
    ),
  );
}

/** AES-256-GCM as `iv ‖ tag ‖ ciphertext`, the layout of a locally wrapped data key. */
export function sealGcm(key: Buffer, plaintext: Buffer, aad: string): { iv: Buffer; tag: Buffer; ciphertext: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), ciphertext };
}

/** Throws when the tag does not verify (any changed byte of iv, tag, ciphertext or additional data). */
export function openGcm(key: Buffer, sealed: { iv: Buffer; tag: Buffer; ciphertext: Buffer }, aad: string): Buffer {
  if (sealed.iv.length !== IV_BYTES || sealed.tag.length !== TAG_BYTES) throw new UnwrapError('malformed sealed data');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
}

/** KMS errors that mean "this blob or context is not valid", as opposed to an outage. */
const KMS_REFUSALS = new Set(['InvalidCiphertextException', 'IncorrectKeyException', 'InvalidKeyUsageException']);

function kmsProvider(keyId: string): KeyProvider {
  return {
    name: 'kms',
    async generateDataKey(context) {
      const { client, sdk } = await kms.get();
      const out = await client.send(new sdk.GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: { ...context } }));
      if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS returned no data key');
      return { plaintext: Buffer.from(out.Plaintext), wrapped: Buffer.from(out.CiphertextBlob) };
    },
    async unwrap(wrapped, context) {
      try {
        const { client, sdk } = await kms.get();
        const out = await client.send(new sdk.DecryptCommand({ KeyId: keyId, CiphertextBlob: wrapped, EncryptionContext: { ...context } }));
        if (!out.Plaintext) throw new UnwrapError('KMS returned no plaintext');
        return Buffer.from(out.Plaintext);
      } catch (err) {
        if (KMS_REFUSALS.has((err as { name?: string })?.name ?? '')) throw new UnwrapError('KMS refused the data key');
        throw err;
      }
    },
  };
}

const masterKeys = new Map<string, Buffer>();

/**
 * Creates the file atomically (written under a temporary name, then hard-linked into place), so two
 * processes starting together agree on one key and nobody ever reads a half-written file.
 */
function createMasterKeyFile(file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, randomBytes(DATA_KEY_BYTES));
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(temp);
  }
}

function masterKey(file: string): Buffer {
  const cached = masterKeys.get(file);
  if (cached) return cached;
  let key: Buffer;
  try {
    key = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new KeyCustodyConfigError('local master key unreadable', 'make LOCAL_MASTER_KEY_FILE readable by the platform');
    createMasterKeyFile(file);
    key = readFileSync(file);
  }
  // Never replace a key of the wrong size: every record wrapped under it would be lost.
  if (key.length !== DATA_KEY_BYTES)
    throw new KeyCustodyConfigError('local master key must be exactly 32 bytes', 'point LOCAL_MASTER_KEY_FILE at the 32-byte master key');
  masterKeys.set(file, key);
  return key;
}

function localProvider(file: string): KeyProvider {
  return {
    name: 'local',
    async generateDataKey(context) {
      const plaintext = randomBytes(DATA_KEY_BYTES);
      const sealed = sealGcm(masterKey(file), plaintext, canonicalContext(context));
      return { plaintext, wrapped: Buffer.concat([sealed.iv, sealed.tag, sealed.ciphertext]) };
    },
    async unwrap(wrapped, context) {
      const sealed = {
        iv: wrapped.subarray(0, IV_BYTES),
        tag: wrapped.subarray(IV_BYTES, IV_BYTES + TAG_BYTES),
        ciphertext: wrapped.subarray(IV_BYTES + TAG_BYTES),
      };
      try {
        return openGcm(masterKey(file), sealed, canonicalContext(context));
      } catch (err) {
        if (err instanceof KeyCustodyConfigError) throw err;
        throw new UnwrapError('local master key refused the data key');
      }
    },
  };
}

/** The provider a given record names; a local master key is refused in AWS, where only KMS may hold keys. */
export function keyProvider(name: KeyProviderName): KeyProvider {
  const custody = keyCustodyConfig();
  if (name === 'kms') {
    if (!custody.kmsKeyId) throw new KeyCustodyConfigError('KMS key not configured', KMS_SETUP);
    return kmsProvider(custody.kmsKeyId);
  }
  if (config().stage === 'aws') throw new KeyCustodyConfigError('a local master key is not allowed in AWS', KMS_SETUP);
  return localProvider(custody.localMasterKeyFile);
}

/** KMS wherever a key is configured; otherwise the local master key (never in AWS). */
export const defaultKeyProvider = (): KeyProvider => keyProvider(keyCustodyConfig().kmsKeyId ? 'kms' : 'local');

/** Whether new secrets can be sealed here, without touching any key: for answers that must name the missing setting. */
export function keyCustodyStatus(): { ok: true; provider: KeyProviderName } | { ok: false; error: string; setup: string } {
  if (keyCustodyConfig().kmsKeyId) return { ok: true, provider: 'kms' };
  if (config().stage === 'aws') return { ok: false, error: 'wallet key custody is not configured', setup: KMS_SETUP };
  return { ok: true, provider: 'local' };
}
