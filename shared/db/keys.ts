/**
 * The only place that builds keys. Everything a user owns lives under `USER#<userId>`; global
 * look-ups that cannot be keyed by user get their own partitions, written in the same transaction
 * as the owned item. Ids that come from requests are only ever sort-key parts inside a partition.
 */

export interface Key {
  pk: string;
  sk: string;
}

const userPk = (userId: string) => `USER#${userId}`;

export const keys = {
  userPartition: userPk,
  profile: (userId: string): Key => ({ pk: userPk(userId), sk: 'PROFILE' }),
  agent: (userId: string, agentId: string): Key => ({ pk: userPk(userId), sk: `AGENT#${agentId}` }),
  agentPrefix: 'AGENT#',
  memory: (userId: string, agentId: string, memoryKey: string): Key => ({ pk: userPk(userId), sk: `MEMORY#${agentId}#${memoryKey}` }),
  memoryPrefix: (agentId: string) => `MEMORY#${agentId}#`,
  apiKey: (userId: string, keyId: string): Key => ({ pk: userPk(userId), sk: `APIKEY#${keyId}` }),
  apiKeyPrefix: 'APIKEY#',
  wallet: (userId: string): Key => ({ pk: userPk(userId), sk: 'WALLET' }),
  heartbeat: (userId: string): Key => ({ pk: userPk(userId), sk: 'HEARTBEAT' }),
  instance: (userId: string): Key => ({ pk: userPk(userId), sk: 'INSTANCE' }),
  subscription: (userId: string): Key => ({ pk: userPk(userId), sk: 'SUBSCRIPTION' }),
  /** Sessions issued before `validAfter` are refused (password change, reset, sign-out everywhere). */
  sessionGate: (userId: string): Key => ({ pk: userPk(userId), sk: 'SESSIONS' }),
  creditEntry: (userId: string, entryId: string): Key => ({ pk: userPk(userId), sk: `CREDIT#${entryId}` }),
  creditPrefix: 'CREDIT#',

  /** Global look-ups. */
  emailIndex: (email: string): Key => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: 'EMAIL' }),
  apiKeyHash: (sha256Hex: string): Key => ({ pk: `APIKEY#${sha256Hex}`, sk: 'APIKEY' }),
  referralCode: (code: string): Key => ({ pk: `REFCODE#${code.toLowerCase()}`, sk: 'REFCODE' }),
  /** Sign-in identities: a wallet that signs in (SIWE), an OAuth provider's subject. */
  loginIdentity: (provider: 'wallet' | 'codehost' | 'webid', subject: string): Key => ({ pk: `LOGIN#${provider}#${subject.toLowerCase()}`, sk: 'LOGIN' }),
  /** Custodial agent wallets (spec 4.9), not sign-in wallets. */
  walletAddress: (address: string): Key => ({ pk: `WALLET#${address.toLowerCase()}`, sk: 'WALLET' }),
  nonce: (nonce: string): Key => ({ pk: `NONCE#${nonce}`, sk: 'NONCE' }),
  txHash: (hash: string): Key => ({ pk: `TXHASH#${hash.toLowerCase()}`, sk: 'TXHASH' }),
  rateLimit: (scope: string, subject: string, windowStart: number): Key => ({ pk: `RL#${scope}#${subject}`, sk: String(windowStart) }),
  counter: (name: string): Key => ({ pk: 'COUNTER', sk: name }),
} as const;
