import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DecryptCommand, GenerateDataKeyCommand, InvalidCiphertextException, KMSClient, KMSServiceException } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { clearDataKeyCache, decrypt, encrypt, EnvelopeError, KeyCustodyConfigError, type EnvelopeRecord } from '#platform/crypto/envelope';

const dir = mkdtempSync(path.join(tmpdir(), 'envelope-test-'));
const masterKeyFile = path.join(dir, 'nested', 'master.key');
const alice = { userId: 'u_alice', purpose: 'wallet-private-key' };
const bob = { userId: 'u_bob', purpose: 'wallet-private-key' };
const FIELDS = ['wrappedKey', 'iv', 'tag', 'ciphertext'] as const;

function flipByte(record: EnvelopeRecord, field: (typeof FIELDS)[number], index: number): EnvelopeRecord {
  const bytes = Buffer.from(record[field], 'base64');
  bytes[index]! ^= 0xff;
  return { ...record, [field]: bytes.toString('base64') };
}

beforeAll(() => {
  reloadConfig({ LOCAL_MASTER_KEY_FILE: masterKeyFile, KMS_KEY_ID: undefined, STAGE: 'test' });
});

afterAll(() => {
  reloadConfig({ LOCAL_MASTER_KEY_FILE: undefined, KMS_KEY_ID: undefined, STAGE: 'test' });
  rmSync(dir, { recursive: true, force: true });
});

describe('envelope encryption with the local master key', () => {
  beforeEach(() => clearDataKeyCache());

  it('creates the master key file (32 bytes, mode 0600) on first use and seals a round trip', async () => {
    expect(existsSync(masterKeyFile)).toBe(false);
    const secret = randomBytes(32);
    const record = await encrypt(secret, alice);
    const stat = statSync(masterKeyFile);
    expect(stat.size).toBe(32);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(record).toMatchObject({ v: 1, alg: 'A256GCM', keyProvider: 'local' });
    expect(Buffer.from(record.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(record.tag, 'base64')).toHaveLength(16);
    expect(Buffer.from(record.ciphertext, 'base64').equals(secret)).toBe(false);
    expect((await decrypt(record, alice)).equals(secret)).toBe(true);
  });

  it('round-trips strings (including empty) from a cold cache, with a fresh data key and iv per record', async () => {
    const a = await encrypt('the same text', alice);
    const b = await encrypt('the same text', alice);
    expect(a.wrappedKey).not.toBe(b.wrappedKey);
    expect(a.iv).not.toBe(b.iv);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    clearDataKeyCache();
    expect((await decrypt(a, alice)).toString('utf8')).toBe('the same text');
    expect((await decrypt(await encrypt('', alice), alice)).toString('utf8')).toBe('');
  });

  it("refuses another user's context and another purpose, warm cache or cold", async () => {
    const record = await encrypt('alice only', alice);
    await expect(decrypt(record, bob)).rejects.toBeInstanceOf(EnvelopeError);
    await expect(decrypt(record, { ...alice, purpose: 'agent-gateway-token' })).rejects.toBeInstanceOf(EnvelopeError);
    clearDataKeyCache();
    await expect(decrypt(record, bob)).rejects.toBeInstanceOf(EnvelopeError);
    expect((await decrypt(record, alice)).toString()).toBe('alice only');
    // The owner's unwrapped key is now cached: the other user is still refused.
    await expect(decrypt(record, bob)).rejects.toBeInstanceOf(EnvelopeError);
  });

  it('refuses a record with any single byte flipped in wrappedKey, iv, tag or ciphertext', async () => {
    const record = await encrypt(randomBytes(32), alice);
    let tried = 0;
    for (const field of FIELDS) {
      const length = Buffer.from(record[field], 'base64').length;
      expect(length).toBeGreaterThan(0);
      for (let i = 0; i < length; i++) {
        await expect(decrypt(flipByte(record, field, i), alice)).rejects.toBeInstanceOf(EnvelopeError);
        tried++;
      }
    }
    expect(tried).toBe(60 + 12 + 16 + 32);
    expect(await decrypt(record, alice)).toHaveLength(32);
  });

  it('refuses records that are not envelope records and contexts that are not {userId, purpose}', async () => {
    const record = await encrypt('x', alice);
    await expect(decrypt({ ...record, v: 2 } as unknown as EnvelopeRecord, alice)).rejects.toBeInstanceOf(EnvelopeError);
    await expect(decrypt({ ...record, tag: 'not base64!' }, alice)).rejects.toBeInstanceOf(EnvelopeError);
    await expect(decrypt({ ...record, tag: record.tag.slice(0, 8) }, alice)).rejects.toBeInstanceOf(EnvelopeError);
    await expect(decrypt(record, { userId: '', purpose: 'wallet-private-key' })).rejects.toBeInstanceOf(EnvelopeError);
    await expect(encrypt('x', { userId: 'u_a', purpose: 'p', extra: 1 } as never)).rejects.toBeInstanceOf(EnvelopeError);
  });

  it('never replaces a master key file of the wrong size (that would lose every record)', async () => {
    const bad = path.join(dir, 'short.key');
    writeFileSync(bad, randomBytes(16));
    reloadConfig({ LOCAL_MASTER_KEY_FILE: bad });
    try {
      await expect(encrypt('x', alice)).rejects.toBeInstanceOf(KeyCustodyConfigError);
      expect(readFileSync(bad)).toHaveLength(16);
    } finally {
      reloadConfig({ LOCAL_MASTER_KEY_FILE: masterKeyFile });
    }
  });

  it('refuses the local master key in AWS: without KMS_KEY_ID nothing is sealed or opened', async () => {
    const record = await encrypt('x', alice);
    clearDataKeyCache();
    reloadConfig({ STAGE: 'aws' });
    try {
      await expect(encrypt('x', alice)).rejects.toBeInstanceOf(KeyCustodyConfigError);
      await expect(decrypt(record, alice)).rejects.toBeInstanceOf(KeyCustodyConfigError);
    } finally {
      reloadConfig({ STAGE: 'test' });
    }
  });
});

describe('envelope encryption with KMS (no emulator: aws-sdk-client-mock)', () => {
  const KEY_ID = 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
  const kms = mockClient(KMSClient);
  /** What a KMS key holds: each blob it issued, with the key and context it was issued for. */
  const issued = new Map<string, { plaintext: Buffer; context: Record<string, string> }>();

  beforeEach(() => {
    clearDataKeyCache();
    issued.clear();
    kms.reset();
    reloadConfig({ KMS_KEY_ID: KEY_ID });
    kms.on(GenerateDataKeyCommand).callsFake((input) => {
      const plaintext = randomBytes(32);
      const blob = randomBytes(184);
      issued.set(blob.toString('base64'), { plaintext, context: { ...input.EncryptionContext } });
      return { KeyId: KEY_ID, Plaintext: new Uint8Array(plaintext), CiphertextBlob: new Uint8Array(blob) };
    });
    kms.on(DecryptCommand).callsFake((input) => {
      const found = issued.get(Buffer.from(input.CiphertextBlob!).toString('base64'));
      if (!found || JSON.stringify(found.context) !== JSON.stringify(input.EncryptionContext ?? {})) {
        throw new InvalidCiphertextException({ message: 'invalid ciphertext', $metadata: {} });
      }
      return { KeyId: KEY_ID, Plaintext: new Uint8Array(found.plaintext) };
    });
  });

  afterEach(() => {
    reloadConfig({ KMS_KEY_ID: undefined });
  });

  afterAll(() => kms.restore());

  it('asks KMS for an AES-256 data key bound to {userId, purpose} and records keyProvider kms', async () => {
    const record = await encrypt('kms secret', alice);
    expect(record.keyProvider).toBe('kms');
    const calls = kms.commandCalls(GenerateDataKeyCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args[0].input).toEqual({ KeyId: KEY_ID, KeySpec: 'AES_256', EncryptionContext: { userId: 'u_alice', purpose: 'wallet-private-key' } });
  });

  it('decrypts with the same EncryptionContext once, then serves the cached data key with no KMS call', async () => {
    const record = await encrypt('kms secret', alice);
    clearDataKeyCache(); // as in another container
    expect((await decrypt(record, alice)).toString()).toBe('kms secret');
    const decrypts = kms.commandCalls(DecryptCommand);
    expect(decrypts).toHaveLength(1);
    expect(decrypts[0]!.args[0].input.EncryptionContext).toEqual({ userId: 'u_alice', purpose: 'wallet-private-key' });
    expect(decrypts[0]!.args[0].input.KeyId).toBe(KEY_ID);
    expect((await decrypt(record, alice)).toString()).toBe('kms secret');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1);
  });

  it("refuses another user's context (KMS refuses the blob) and flipped bytes", async () => {
    const record = await encrypt('kms secret', alice);
    clearDataKeyCache();
    await expect(decrypt(record, bob)).rejects.toBeInstanceOf(EnvelopeError);
    await expect(decrypt(flipByte(record, 'wrappedKey', 7), alice)).rejects.toBeInstanceOf(EnvelopeError);
    await expect(decrypt(flipByte(record, 'ciphertext', 0), alice)).rejects.toBeInstanceOf(EnvelopeError);
    await expect(decrypt(flipByte(record, 'tag', 15), alice)).rejects.toBeInstanceOf(EnvelopeError);
  });

  it('lets a KMS outage surface as an outage, not as a refused record', async () => {
    const record = await encrypt('kms secret', alice);
    clearDataKeyCache();
    kms.on(DecryptCommand).rejects(new KMSServiceException({ name: 'KMSInternalException', $fault: 'server', message: 'internal', $metadata: {} }));
    const err = await decrypt(record, alice).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(EnvelopeError);
  });
});
