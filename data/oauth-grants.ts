import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import { consumeSingleUse, issueSingleUse } from './single-use';
import { ConditionFailedError, getGlobal, tenant } from './tenant';

/**
 * The MCP server's OAuth records. A client registers anonymously (RFC 7591), so it lives in a global
 * partition. What an account granted a client is under the account (`USER#<id> / OAUTHGRANT#<client>`)
 * with a `grantId` that every token issued under it carries: a token holds only while its grant does,
 * so deleting the grant (a revocation, the console's revoke button) ends all of them at once. Tokens
 * and codes are stored only as their SHA-256; codes and refresh tokens are taken once (data/single-use.ts).
 */

export interface OAuthClient {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  createdAt: string;
}

export interface OAuthGrant {
  clientId: string;
  clientName: string;
  grantId: string;
  scope: string;
  resource: string;
  createdAt: string;
  lastUsedAt?: string;
}

/** What a code, an access token and a refresh token each stand for. */
export interface OAuthTokenClaims {
  userId: string;
  clientId: string;
  grantId: string;
  scope: string;
  resource: string;
}

export interface OAuthCodeClaims extends OAuthTokenClaims {
  redirectUri: string;
  codeChallenge: string;
}

export async function putOAuthClient(client: OAuthClient): Promise<void> {
  await db().send(
    new PutCommand({ TableName: tableName(), Item: { ...keys.oauthClient(client.clientId), ...client }, ConditionExpression: 'attribute_not_exists(pk)' }),
  );
}

export async function getOAuthClient(clientId: string): Promise<OAuthClient | undefined> {
  const item = await getGlobal<OAuthClient & Record<string, unknown>>(keys.oauthClient(clientId));
  return item && { clientId: item.clientId, clientName: item.clientName, redirectUris: item.redirectUris, createdAt: item.createdAt };
}

/** A new grant replaces the account's earlier one for the client, and so every token issued under it. */
export async function putOAuthGrant(userId: string, grant: OAuthGrant): Promise<void> {
  await tenant(userId).put({ ...keys.oauthGrant(userId, grant.clientId), ...grant });
}

export async function getOAuthGrant(userId: string, clientId: string): Promise<OAuthGrant | undefined> {
  return tenant(userId).get<OAuthGrant & Record<string, unknown>>(keys.oauthGrant(userId, clientId), true);
}

export async function listOAuthGrants(userId: string): Promise<OAuthGrant[]> {
  return tenant(userId).queryAll<OAuthGrant & Record<string, unknown>>(keys.oauthGrantPrefix, { consistent: true });
}

/** Ends the grant (only the given one, when `grantId` is named, so a newer grant survives a late revocation). */
export async function deleteOAuthGrant(userId: string, clientId: string, grantId?: string): Promise<boolean> {
  try {
    const old = await tenant(userId).delete(
      keys.oauthGrant(userId, clientId),
      grantId ? { expression: 'grantId = :g', values: { ':g': grantId } } : { expression: 'attribute_exists(pk)' },
    );
    return old !== undefined || !grantId;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** The claims of a stored record, without its key and expiry. */
const claimsOf = (item: OAuthTokenClaims): OAuthTokenClaims => ({
  userId: item.userId,
  clientId: item.clientId,
  grantId: item.grantId,
  scope: item.scope,
  resource: item.resource,
});

export const issueOAuthCode = (codeHash: string, claims: OAuthCodeClaims, expiresAt: number) => issueSingleUse('oauthCode', codeHash, claims, expiresAt);
export async function takeOAuthCode(codeHash: string, now: number): Promise<OAuthCodeClaims | undefined> {
  const item = await consumeSingleUse<OAuthCodeClaims>('oauthCode', codeHash, now);
  return item && { ...claimsOf(item), redirectUri: item.redirectUri, codeChallenge: item.codeChallenge };
}

export const issueOAuthRefreshToken = (tokenHash: string, claims: OAuthTokenClaims, expiresAt: number) =>
  issueSingleUse('oauthRefresh', tokenHash, claims, expiresAt);
export async function takeOAuthRefreshToken(tokenHash: string, now: number): Promise<OAuthTokenClaims | undefined> {
  const item = await consumeSingleUse<OAuthTokenClaims>('oauthRefresh', tokenHash, now);
  return item && claimsOf(item);
}

export async function putOAuthAccessToken(tokenHash: string, claims: OAuthTokenClaims, expiresAt: number): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.oauthAccessToken(tokenHash), ...claims, expiresAt },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** The access token's claims while it has not expired at `now` (epoch seconds). */
export async function getOAuthAccessToken(tokenHash: string, now: number): Promise<OAuthTokenClaims | undefined> {
  const item = await getGlobal<OAuthTokenClaims & { expiresAt: number } & Record<string, unknown>>(keys.oauthAccessToken(tokenHash), true);
  if (!item || item.expiresAt <= now) return undefined;
  return claimsOf(item);
}

export async function deleteOAuthAccessToken(tokenHash: string): Promise<OAuthTokenClaims | undefined> {
  const out = await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.oauthAccessToken(tokenHash), ReturnValues: 'ALL_OLD' }));
  return out.Attributes && claimsOf(out.Attributes as OAuthTokenClaims);
}
