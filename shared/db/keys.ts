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
  /** Per-account API key count, kept in the same transaction as each create and delete (cap). */
  apiKeyCount: (userId: string): Key => ({ pk: userPk(userId), sk: 'APIKEYCOUNT' }),
  /** Password reset: the global look-up by SHA-256 of the emailed token, and the account's current token. */
  resetToken: (sha256Hex: string): Key => ({ pk: `RESET#${sha256Hex}`, sk: 'RESET' }),
  passwordReset: (userId: string): Key => ({ pk: userPk(userId), sk: 'PASSWORDRESET' }),
  /** Marker in the owner's partition for each `LOGIN#` identity, so account deletion finds them without a scan. */
  loginMarker: (userId: string, provider: 'wallet' | 'codehost' | 'webid', subject: string): Key => ({
    pk: userPk(userId),
    sk: `LOGIN#${provider}#${subject.toLowerCase()}`,
  }),
  loginMarkerPrefix: 'LOGIN#',
  /** A webhook event already delivered to one endpoint, so an SQS retry skips the endpoints that took it. */
  webhookDelivery: (eventId: string, endpointHash: string): Key => ({ pk: `WEBHOOK#${eventId}`, sk: endpointHash }),
  /** Card webhook events already handled (global: the processor's event ids are not per user). */
  cardEvent: (eventId: string): Key => ({ pk: `EVENT#${eventId}`, sk: 'CARD' }),
  /** Card processor customer → user, for subscription events that carry no user id of ours. */
  cardCustomer: (customerId: string): Key => ({ pk: `CARDCUSTOMER#${customerId}`, sk: 'CARDCUSTOMER' }),
  /** A user's own AI provider key (bring your own key), one item per provider. */
  byok: (userId: string, provider: string): Key => ({ pk: userPk(userId), sk: `BYOK#${provider}` }),
  byokPrefix: 'BYOK#',
  /** Agents (issue 5). Per-account agent quota counter, kept in the same transaction as each agent it admits or releases. */
  agentQuota: (userId: string): Key => ({ pk: userPk(userId), sk: 'AGENTQUOTA' }),
  /** The account's instance gateway token (envelope-encrypted, plus its SHA-256 for checks without a decrypt). */
  gatewayToken: (userId: string): Key => ({ pk: userPk(userId), sk: 'GATEWAYTOKEN' }),
  /** Provisioner idempotency record of one unit of work (an agent launch, a lifecycle generation). */
  provisionJob: (userId: string, jobId: string): Key => ({ pk: userPk(userId), sk: `PROVJOB#${jobId}` }),
  /** Agent message history, sortable by time: `MSG#<agentId>#<ISO time>#<random>`. */
  agentMessage: (userId: string, agentId: string, sortId: string): Key => ({ pk: userPk(userId), sk: `MSG#${agentId}#${sortId}` }),
  agentMessagePrefix: (agentId: string) => `MSG#${agentId}#`,
  /** Channel provisioning record (spec 4.5): encrypted channel tokens and the live stream of one agent. */
  channelProvision: (userId: string, agentId: string): Key => ({ pk: userPk(userId), sk: `CHANNELS#${agentId}` }),
  /** Platform counter shards under `COUNTER` (see shared/db/agents.ts for the names). */
  counterPartition: 'COUNTER',
  /** OAuth sign-in in flight: state → PKCE verifier and callback path; single use, short TTL. */
  oauthState: (state: string): Key => ({ pk: `OAUTHSTATE#${state}`, sk: 'OAUTHSTATE' }),
  /** Decentralised-social identity (fid) → user, and its marker in the owner's partition (same `LOGIN#` scheme as loginIdentity/loginMarker). */
  socialIdentity: (fid: string): Key => ({ pk: `LOGIN#social#${fid}`, sk: 'LOGIN' }),
  socialIdentityMarker: (userId: string, fid: string): Key => ({ pk: userPk(userId), sk: `LOGIN#social#${fid}` }),
  /** Social session refresh token, by SHA-256 of the token (only the hash is stored). */
  socialRefresh: (sha256Hex: string): Key => ({ pk: `SOCIALREFRESH#${sha256Hex}`, sk: 'SOCIALREFRESH' }),
  /** Heartbeat and metrics (issue 6). gsi1 partition of the enabled heartbeats of one shard, sorted by their nextHeartbeat. */
  heartbeatDuePartition: (shard: number) => `HBDUE#${shard}`,
  /** One heartbeat measurement of the account's instance, sortable by time (TTL 35 days). */
  metricSample: (userId: string, isoTimestamp: string): Key => ({ pk: userPk(userId), sk: `METRIC#${isoTimestamp}` }),
  metricSamplePrefix: 'METRIC#',
  /** Records the metrics summary counts (see shared/db/metrics.ts for their fields); written by the features that own them. */
  installedSkill: (userId: string, agentId: string, skillId: string): Key => ({ pk: userPk(userId), sk: `SKILL#${agentId}#${skillId}` }),
  installedSkillPrefix: 'SKILL#',
  booking: (userId: string, bookingId: string): Key => ({ pk: userPk(userId), sk: `BOOKING#${bookingId}` }),
  bookingPrefix: 'BOOKING#',
  fan: (userId: string, fanId: string): Key => ({ pk: userPk(userId), sk: `FAN#${fanId}` }),
  fanPrefix: 'FAN#',
  /** Per calendar month (`yyyy-mm`, UTC). */
  streamsMonth: (userId: string, month: string): Key => ({ pk: userPk(userId), sk: `STREAMS#${month}` }),
  streamsMonthPrefix: 'STREAMS#',
  revenueMonth: (userId: string, month: string): Key => ({ pk: userPk(userId), sk: `REVENUE#${month}` }),
  revenueMonthPrefix: 'REVENUE#',
  /** Local stack (issue 17): the sort key of every account's instance item, for its start-up reconcile scan. */
  instanceSortKey: 'INSTANCE',
  /** Local card mode (issue 17): a checkout session of the local card page, single use, short TTL. */
  localCheckout: (sessionId: string): Key => ({ pk: `LOCALCHECKOUT#${sessionId}`, sk: 'LOCALCHECKOUT' }),
} as const;
