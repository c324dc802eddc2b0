import { randomUUID } from 'node:crypto';
import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { apiKeyPreview, generateApiKey, hashApiKey } from '#platform/crypto/api-keys';
import { db, tableName } from './client';
import * as keys from './keys';
import type { Key } from './keys';
import { ConditionFailedError, getGlobal, tenant, tx } from './tenant';
import { transactRetrying } from './transact-retry';
import { DomainError } from '#platform/errors';

/**
 * API keys (spec 2.10, 4.7). The owned record lives at `USER#<id> / APIKEY#<keyId>`; the global
 * `APIKEY#<sha256>` item resolves a presented key to its account on every request; the account's
 * `APIKEYCOUNT` item holds how many keys exist, so the cap is settled by the database. The three
 * change together in one transaction. The key itself is never stored.
 */
export interface ApiKeyRecord {
  id: string;
  name: string;
  keyPreview: string;
  createdAt: string;
  lastUsed: string | null;
}

interface ApiKeyItem extends ApiKeyRecord, Record<string, unknown> {
  keyHash: string;
}

export class ApiKeyLimitError extends DomainError {
  constructor(limit: number) {
    super('invalid', `an account holds at most ${limit} API keys; delete one first`, 'KEY_LIMIT', { limit });
  }
}

const newApiKeyId = () => `key_${randomUUID().replaceAll('-', '')}`;

const recordOf = (item: ApiKeyItem): ApiKeyRecord => ({
  id: item.id,
  name: item.name,
  keyPreview: item.keyPreview,
  createdAt: item.createdAt,
  lastUsed: item.lastUsed ?? null,
});

const absent = { expression: 'attribute_not_exists(pk)' };

/**
 * Creates a key unless the account already holds `cap`; concurrent creates can never pass the cap
 * because the count is raised under a condition in the same transaction. `email` goes on the global
 * item because admin rights are judged by the account's email on every keyed request.
 */
export async function createApiKey(userId: string, email: string, name: string, cap: number, now = new Date()) {
  const key = generateApiKey();
  const keyHash = hashApiKey(key);
  const item: ApiKeyItem = { id: newApiKeyId(), name, keyPreview: apiKeyPreview(key), keyHash, createdAt: now.toISOString(), lastUsed: null };
  try {
    await transactRetrying([
      tx.put({ ...keys.apiKey(userId, item.id), ...item }, absent),
      tx.put({ ...keys.apiKeyHash(keyHash), userId, email, keyId: item.id }, absent),
      tx.update(
        keys.apiKeyCount(userId),
        { expression: 'SET #count = if_not_exists(#count, :zero) + :one', names: { '#count': 'count' }, values: { ':zero': 0, ':one': 1 } },
        { expression: 'attribute_not_exists(#count) OR #count < :cap', values: { ':cap': cap } },
      ),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[2] === 'ConditionalCheckFailed') throw new ApiKeyLimitError(cap);
    throw err;
  }
  return { id: item.id, name: item.name, key, createdAt: item.createdAt };
}

export async function listApiKeys(userId: string): Promise<ApiKeyRecord[]> {
  const items = await tenant(userId).queryAll<ApiKeyItem>(keys.apiKeyPrefix);
  return items.map(recordOf).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

export async function getApiKey(userId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const item = await tenant(userId).get<ApiKeyItem>(keys.apiKey(userId, keyId));
  return item && recordOf(item);
}

/**
 * Revokes a key: the owned record, the global look-up and one from the count, together. Every
 * request reads the global item, so the key is refused from the very next request. Returns false
 * when the key is not the caller's (or another request deleted it first).
 */
export async function deleteApiKey(userId: string, keyId: string): Promise<boolean> {
  const item = await tenant(userId).get<ApiKeyItem>(keys.apiKey(userId, keyId), true);
  if (!item) return false;
  try {
    await transactRetrying([
      tx.delete(keys.apiKey(userId, keyId), { expression: 'attribute_exists(pk)' }),
      tx.delete(keys.apiKeyHash(item.keyHash)),
      tx.update(keys.apiKeyCount(userId), {
        expression: 'SET #count = if_not_exists(#count, :one) - :one',
        names: { '#count': 'count' },
        values: { ':one': 1 },
      }),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') return false;
    throw err;
  }
  return true;
}

/** The global look-ups of an account's keys, for account deletion (they live outside its partition). */
export async function apiKeyGlobalKeys(userId: string): Promise<Key[]> {
  const items = await tenant(userId).queryAll<ApiKeyItem>(keys.apiKeyPrefix);
  return items.map((item) => keys.apiKeyHash(item.keyHash));
}

const LAST_USED_RESOLUTION_MS = 60_000;
const MEMO_MAX_ENTRIES = 1000;
/** Key id → when this container last wrote (or saw written) its `lastUsed`; spares most writes. */
const lastUsedMemo = new Map<string, number>();

/**
 * Records that a key authenticated, at most once a minute per key: the condition lets only one
 * writer per minute through across all containers, and the memo lets a warm container skip even
 * the attempt. Never creates the record: a key deleted meanwhile stays deleted. Returns whether it
 * wrote. Throws on database failures; the caller decides they must not fail a request.
 */
export async function touchApiKeyLastUsed(userId: string, keyId: string, now = Date.now()): Promise<boolean> {
  const memoKey = `${userId}/${keyId}`;
  const seen = lastUsedMemo.get(memoKey);
  if (seen !== undefined && now - seen < LAST_USED_RESOLUTION_MS) return false;
  if (lastUsedMemo.size >= MEMO_MAX_ENTRIES) lastUsedMemo.clear();
  lastUsedMemo.set(memoKey, now);
  try {
    await tenant(userId).update(
      keys.apiKey(userId, keyId),
      { expression: 'SET lastUsed = :now', values: { ':now': new Date(now).toISOString() } },
      {
        expression: 'attribute_exists(pk) AND (attribute_not_exists(lastUsed) OR attribute_type(lastUsed, :nullType) OR lastUsed < :minuteAgo)',
        values: { ':nullType': 'NULL', ':minuteAgo': new Date(now - LAST_USED_RESOLUTION_MS).toISOString() },
      },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    lastUsedMemo.delete(memoKey);
    throw err;
  }
}

/** The global item of a presented key: which account and key record it stands for. */
export interface ApiKeyLookup {
  userId: string;
  email: string;
  keyId: string;
}

/** The account fields a keyed request is judged by: rights follow the address as it is now. */
export interface KeyedAccount {
  email: string;
  emailVerified?: boolean;
}

const OWNERS_MAX_ENTRIES = 1000;
/**
 * Key hash → the account and key record it was created for. A key never changes hands (revoking
 * deletes it; a new key has a new hash), so a warm container knows the account's partition before
 * reading and reads the key's global item and the account's profile in one BatchGet instead of
 * two Gets in a row. Both are still read, consistently, on every request: a deleted key or
 * account is refused on the very next request in every container.
 */
const keyOwners = new Map<string, { userId: string; keyId: string }>();

/** Attempts at the items DynamoDB leaves unprocessed (throttling) before asking for each alone. */
const BATCH_ATTEMPTS = 3;

async function readConsistently(wanted: Key[]): Promise<Record<string, unknown>[]> {
  let pending: Key[] = wanted;
  const found: Record<string, unknown>[] = [];
  for (let attempt = 0; attempt < BATCH_ATTEMPTS && pending.length; attempt++) {
    const out = await db().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending, ConsistentRead: true } } }));
    found.push(...(out.Responses?.[tableName()] ?? []));
    pending = (out.UnprocessedKeys?.[tableName()]?.Keys as Key[] | undefined) ?? [];
  }
  for (const key of pending) {
    const out = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
    if (out.Item) found.push(out.Item);
  }
  return found;
}

/**
 * Resolves a presented key (by its SHA-256) to its global item and its account's profile, or
 * undefined for a key that does not exist. `account` is undefined when the profile is gone.
 */
export async function findApiKeyWithAccount(keyHash: string): Promise<{ key: ApiKeyLookup; account: KeyedAccount | undefined } | undefined> {
  const lookupKey = keys.apiKeyHash(keyHash);
  const known = keyOwners.get(keyHash);
  if (known) {
    const profileKey = keys.profile(known.userId);
    const items = await readConsistently([lookupKey, profileKey]);
    const key = items.find((i) => i.pk === lookupKey.pk && i.sk === lookupKey.sk) as (ApiKeyLookup & Key) | undefined;
    if (!key) {
      keyOwners.delete(keyHash);
      return undefined;
    }
    if (key.userId === known.userId) {
      const account = items.find((i) => i.pk === profileKey.pk && i.sk === profileKey.sk) as KeyedAccount | undefined;
      return { key, account };
    }
  }
  const key = await getGlobal<ApiKeyLookup & Record<string, unknown>>(lookupKey, true);
  if (!key) return undefined;
  if (keyOwners.size >= OWNERS_MAX_ENTRIES) keyOwners.clear();
  keyOwners.set(keyHash, { userId: key.userId, keyId: key.keyId });
  return { key, account: await tenant(key.userId).get<KeyedAccount & Record<string, unknown>>(keys.profile(key.userId), true) };
}

/** The key record a hash stood for when this container last resolved it (for `lastUsed` alongside the look-up). */
export const knownKeyOwner = (keyHash: string) => keyOwners.get(keyHash);

/** Tests only: forget what this container has written. */
export const resetApiKeyUseMemo = () => {
  lastUsedMemo.clear();
  keyOwners.clear();
};

/** Revokes every key of the account (recovery, or a password change / sign-out that asks for it); returns the revoked records. */
export async function revokeAllApiKeys(userId: string): Promise<ApiKeyRecord[]> {
  const items = await tenant(userId).queryAll<ApiKeyItem>(keys.apiKeyPrefix, { consistent: true });
  const revoked: ApiKeyRecord[] = [];
  for (const item of items) if (await deleteApiKey(userId, item.id)) revoked.push(recordOf(item));
  return revoked;
}
