import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import type { Key } from './keys';

/**
 * Tokens that work once: stored with an expiry under a global partition of their purpose, then
 * taken by one conditional delete, so of any number of concurrent presentations exactly one gets
 * the record. DynamoDB's TTL removes what nobody took, days late at worst, so expiry is part of the
 * delete's condition too.
 *
 * An MPP challenge is issued here as well, but it is not taken by a delete: paying it moves it on
 * to `paid` and then `served` (data/mpp-challenges.ts).
 */

/** Each purpose keeps the partition its records always had, so stored tokens stay readable. */
const keyOf = {
  /** OAuth sign-in in flight: state → PKCE verifier and callback path. */
  oauthState: keys.oauthState,
  /** Sign-In with Ethereum nonce. */
  siweNonce: keys.nonce,
  /** Social session refresh token, by the SHA-256 of the token. */
  socialRefresh: keys.socialRefresh,
  /** MPP 402 challenge, by its nonce. */
  mppChallenge: keys.mppChallenge,
  /** MCP OAuth authorization code, by the SHA-256 of the code. */
  oauthCode: keys.oauthCode,
  /** MCP OAuth refresh token, by its SHA-256: taken by the refresh that rotates it. */
  oauthRefresh: keys.oauthRefresh,
} satisfies Record<string, (id: string) => Key>;

export type SingleUsePurpose = keyof typeof keyOf;

/**
 * Stores the token `id` of `purpose` with `fields` until `expiresAt` (epoch seconds: the TTL
 * attribute, and the deadline `consumeSingleUse` holds it to). Ids are random: an id already
 * stored fails the write rather than replacing a token someone holds.
 */
export async function issueSingleUse(purpose: SingleUsePurpose, id: string, fields: object, expiresAt: number): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keyOf[purpose](id), ...fields, expiresAt },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/**
 * Takes the token: deletes it if it exists, has not expired at `now` (epoch ms) and holds every
 * attribute of `match` (an OAuth state is only good for the provider it was issued for). Returns
 * the record as it was stored, or undefined when the token is unknown, expired, already taken or
 * does not match.
 */
export async function consumeSingleUse<T extends object>(
  purpose: SingleUsePurpose,
  id: string,
  now: number,
  match: Record<string, string> = {},
): Promise<T | undefined> {
  const matched = Object.entries(match);
  try {
    const out = await db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keyOf[purpose](id),
        ConditionExpression: ['attribute_exists(pk) AND expiresAt > :now', ...matched.map((_m, i) => `#m${i} = :m${i}`)].join(' AND '),
        ExpressionAttributeNames: matched.length ? Object.fromEntries(matched.map(([name], i) => [`#m${i}`, name])) : undefined,
        ExpressionAttributeValues: { ':now': Math.floor(now / 1000), ...Object.fromEntries(matched.map(([, value], i) => [`:m${i}`, value])) },
        ReturnValues: 'ALL_OLD',
      }),
    );
    return out.Attributes as T | undefined;
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
    throw err;
  }
}
