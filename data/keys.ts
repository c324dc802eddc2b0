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

// One named export per key: a function bundles only the builders it uses (`import * as keys`, docs/architecture.md §11).

export const userPartition = userPk;
export const profile = (userId: string): Key => ({ pk: userPk(userId), sk: 'PROFILE' });
export const agent = (userId: string, agentId: string): Key => ({ pk: userPk(userId), sk: `AGENT#${agentId}` });
export const agentPrefix = 'AGENT#';
/**
 * The instance's status and websocket base copied beside the agents (sorting just before
 * `AGENT#`), so the agent list reads both in one Query over `agentListRange`.
 */
export const agentListInstance = (userId: string): Key => ({ pk: userPk(userId), sk: 'AGENT!INSTANCE' });
export const agentListRange = { from: 'AGENT!', to: 'AGENT#\uffff' };
export const memory = (userId: string, agentId: string, memoryKey: string): Key => ({ pk: userPk(userId), sk: `MEMORY#${agentId}#${memoryKey}` });
export const memoryPrefix = (agentId: string) => `MEMORY#${agentId}#`;
export const apiKey = (userId: string, keyId: string): Key => ({ pk: userPk(userId), sk: `APIKEY#${keyId}` });
export const apiKeyPrefix = 'APIKEY#';
export const wallet = (userId: string): Key => ({ pk: userPk(userId), sk: 'WALLET' });
export const heartbeat = (userId: string): Key => ({ pk: userPk(userId), sk: 'HEARTBEAT' });
export const instance = (userId: string): Key => ({ pk: userPk(userId), sk: 'INSTANCE' });
export const subscription = (userId: string): Key => ({ pk: userPk(userId), sk: 'SUBSCRIPTION' });
/** Sessions issued before `validAfter` are refused (password change, reset, sign-out everywhere). */
export const sessionGate = (userId: string): Key => ({ pk: userPk(userId), sk: 'SESSIONS' });
export const creditEntry = (userId: string, entryId: string): Key => ({ pk: userPk(userId), sk: `CREDIT#${entryId}` });
export const creditPrefix = 'CREDIT#';
/** Global look-ups. */
export const emailIndex = (email: string): Key => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: 'EMAIL' });
export const apiKeyHash = (sha256Hex: string): Key => ({ pk: `APIKEY#${sha256Hex}`, sk: 'APIKEY' });
export const referralCode = (code: string): Key => ({ pk: `REFCODE#${code.toLowerCase()}`, sk: 'REFCODE' });
/** Sign-in identities: a wallet that signs in (SIWE), an OAuth provider's subject. */
export const loginIdentity = (provider: 'wallet' | 'codehost' | 'webid', subject: string): Key => ({
  pk: `LOGIN#${provider}#${subject.toLowerCase()}`,
  sk: 'LOGIN',
});
/** Custodial agent wallets (spec 4.9), not sign-in wallets. */
export const walletAddress = (address: string): Key => ({ pk: `WALLET#${address.toLowerCase()}`, sk: 'WALLET' });
export const nonce = (nonce: string): Key => ({ pk: `NONCE#${nonce}`, sk: 'NONCE' });
export const txHash = (hash: string): Key => ({ pk: `TXHASH#${hash.toLowerCase()}`, sk: 'TXHASH' });
/** An instance's subdomain → its account, for the edge that routes `<subdomain>.<agentDomain>`. */
export const agentSubdomain = (subdomain: string): Key => ({ pk: `SUBDOMAIN#${subdomain.toLowerCase()}`, sk: 'SUBDOMAIN' });
/** Where the backfill of missing `SUBDOMAIN#` look-ups stands in its scan of the table (data/subdomain-lookups.ts). */
export const subdomainBackfill = (): Key => ({ pk: 'BACKFILL#SUBDOMAIN', sk: 'CURSOR' });
/** One GCRA state per scope and subject (data/rate-limits.ts). */
export const rateLimit = (scope: string, subject: string): Key => ({ pk: `RL#${scope}#${subject}`, sk: 'WINDOW' });
/** Failed sign-ins per window (data/sign-in-attempts.ts): read before, counted after the password check. */
export const signInFailures = (scope: string, subject: string, windowStart: number): Key => ({ pk: `SIGNINFAIL#${scope}#${subject}`, sk: String(windowStart) });
export const counter = (name: string): Key => ({ pk: 'COUNTER', sk: name });
/** Never written: `GET /api/health` reads it to see that the table answers. */
export const healthProbe = (): Key => ({ pk: 'HEALTH', sk: 'PROBE' });
/** Per-account API key count, kept in the same transaction as each create and delete (cap). */
export const apiKeyCount = (userId: string): Key => ({ pk: userPk(userId), sk: 'APIKEYCOUNT' });
/** Password reset: the global look-up by SHA-256 of the emailed token, and the account's current token. */
export const resetToken = (sha256Hex: string): Key => ({ pk: `RESET#${sha256Hex}`, sk: 'RESET' });
export const passwordReset = (userId: string): Key => ({ pk: userPk(userId), sk: 'PASSWORDRESET' });
/** Marker in the owner's partition for each `LOGIN#` identity, so account deletion finds them without a scan. */
export const loginMarker = (userId: string, provider: 'wallet' | 'codehost' | 'webid', subject: string): Key => ({
  pk: userPk(userId),
  sk: `LOGIN#${provider}#${subject.toLowerCase()}`,
});
export const loginMarkerPrefix = 'LOGIN#';
/** A webhook event already delivered to one endpoint, so an SQS retry skips the endpoints that took it. */
export const webhookDelivery = (eventId: string, endpointHash: string): Key => ({ pk: `WEBHOOK#${eventId}`, sk: endpointHash });
/** Card webhook events already handled (global: the processor's event ids are not per user). */
export const cardEvent = (eventId: string): Key => ({ pk: `EVENT#${eventId}`, sk: 'CARD' });
/** Card processor customer → user, for subscription events that carry no user id of ours. */
export const cardCustomer = (customerId: string): Key => ({ pk: `CARDCUSTOMER#${customerId}`, sk: 'CARDCUSTOMER' });
/** A user's own AI provider key (bring your own key), one item per provider. */
export const byok = (userId: string, provider: string): Key => ({ pk: userPk(userId), sk: `BYOK#${provider}` });
export const byokPrefix = 'BYOK#';
/** Agents. Per-account agent quota counter, kept in the same transaction as each agent it admits or releases. */
export const agentQuota = (userId: string): Key => ({ pk: userPk(userId), sk: 'AGENTQUOTA' });
/** The account's instance gateway token (envelope-encrypted, plus its SHA-256 for checks without a decrypt). */
export const gatewayToken = (userId: string): Key => ({ pk: userPk(userId), sk: 'GATEWAYTOKEN' });
/** Provisioner idempotency record of one unit of work (an agent launch, a lifecycle generation). */
export const provisionJob = (userId: string, jobId: string): Key => ({ pk: userPk(userId), sk: `PROVJOB#${jobId}` });
/** Agent message history, sortable by time: `MSG#<agentId>#<ISO time>#<random>`. */
export const agentMessage = (userId: string, agentId: string, sortId: string): Key => ({ pk: userPk(userId), sk: `MSG#${agentId}#${sortId}` });
export const agentMessagePrefix = (agentId: string) => `MSG#${agentId}#`;
/** Channel provisioning record (spec 4.5): encrypted channel tokens and the live stream of one agent. */
export const channelProvision = (userId: string, agentId: string): Key => ({ pk: userPk(userId), sk: `CHANNELS#${agentId}` });
/** Platform counter shards under `COUNTER` (see data/agents.ts for the names). */
export const counterPartition = 'COUNTER';
/** OAuth sign-in in flight: state → PKCE verifier and callback path; single use, short TTL. */
export const oauthState = (state: string): Key => ({ pk: `OAUTHSTATE#${state}`, sk: 'OAUTHSTATE' });
/** Decentralised-social identity (fid) → user, and its marker in the owner's partition (same `LOGIN#` scheme as loginIdentity/loginMarker). */
export const socialIdentity = (fid: string): Key => ({ pk: `LOGIN#social#${fid}`, sk: 'LOGIN' });
export const socialIdentityMarker = (userId: string, fid: string): Key => ({ pk: userPk(userId), sk: `LOGIN#social#${fid}` });
/** Social session refresh token, by SHA-256 of the token (only the hash is stored). */
export const socialRefresh = (sha256Hex: string): Key => ({ pk: `SOCIALREFRESH#${sha256Hex}`, sk: 'SOCIALREFRESH' });
/** Heartbeat and metrics. gsi1 partition of the enabled heartbeats of one shard, sorted by their nextHeartbeat. */
export const heartbeatDuePartition = (shard: number) => `HBDUE#${shard}`;
/** One heartbeat measurement of the account's instance, sortable by time (TTL 35 days). */
export const metricSample = (userId: string, isoTimestamp: string): Key => ({ pk: userPk(userId), sk: `METRIC#${isoTimestamp}` });
export const metricSamplePrefix = 'METRIC#';
/** Records the metrics summary counts (see data/metrics.ts for their fields); written by the features that own them. */
export const installedSkill = (userId: string, agentId: string, skillId: string): Key => ({ pk: userPk(userId), sk: `SKILL#${agentId}#${skillId}` });
export const installedSkillPrefix = 'SKILL#';
export const booking = (userId: string, bookingId: string): Key => ({ pk: userPk(userId), sk: `BOOKING#${bookingId}` });
export const bookingPrefix = 'BOOKING#';
export const fan = (userId: string, fanId: string): Key => ({ pk: userPk(userId), sk: `FAN#${fanId}` });
export const fanPrefix = 'FAN#';
/** Per calendar month (`yyyy-mm`, UTC). */
export const streamsMonth = (userId: string, month: string): Key => ({ pk: userPk(userId), sk: `STREAMS#${month}` });
export const streamsMonthPrefix = 'STREAMS#';
export const revenueMonth = (userId: string, month: string): Key => ({ pk: userPk(userId), sk: `REVENUE#${month}` });
export const revenueMonthPrefix = 'REVENUE#';
/** Monitoring: gsi1 partition of the instances now in `provisioning`, sorted by when they entered it (sparse). */
export const provisioningPartition = 'INSTANCES#PROVISIONING';
export const provisioningSince = (isoTimestamp: string, userId: string) => `${isoTimestamp}#${userId}`;
/** gsi1 partition of the agents still in phase `provisioning`, sorted by when they were accepted (sparse), for the stranded-work reconciler. */
export const provisioningAgentsPartition = 'AGENTS#PROVISIONING';
export const provisioningAgentSince = (isoTimestamp: string, userId: string, agentId: string) => `${isoTimestamp}#${userId}#${agentId}`;
/** The user id of a `USER#<id>` partition key read back from an index. */
export const userIdOfPartition = (pk: string) => (pk.startsWith('USER#') ? pk.slice('USER#'.length) : undefined);
/** Email verification: the global look-up by SHA-256 of the emailed token, and the account's current token (only the latest link works). */
export const emailVerifyToken = (sha256Hex: string): Key => ({ pk: `EMAILVERIFY#${sha256Hex}`, sk: 'EMAILVERIFY' });
export const emailVerification = (userId: string): Key => ({ pk: userPk(userId), sk: 'EMAILVERIFY' });
/** How many referrals of this account were credited (the per-referrer cap). */
export const referralCount = (userId: string): Key => ({ pk: userPk(userId), sk: 'REFERRALCOUNT' });
/** Registered WebAuthn credentials that can verify agents, by credential id (base64url). */
export const webauthnCredential = (userId: string, credentialId: string): Key => ({ pk: userPk(userId), sk: `WEBAUTHN#${credentialId}` });
export const webauthnCredentialPrefix = 'WEBAUTHN#';
/** A WebAuthn challenge in flight (registration or an agent verification); single use, short TTL. */
export const webauthnChallenge = (userId: string, purpose: string): Key => ({ pk: userPk(userId), sk: `WEBAUTHNCHALLENGE#${purpose}` });
/** Sign-in limiting: the client addresses this account recently signed in from, which the per-account failure cap never slows. */
export const knownSignInAddresses = (userId: string): Key => ({ pk: userPk(userId), sk: 'SIGNINADDRESSES' });
// --- skills (functions/http/skills/skills/*): one block per skill family ---
/** calendar: one event of the user's calendar. */
export const calendarEvent = (userId: string, eventId: string): Key => ({ pk: userPk(userId), sk: `CALEVENT#${eventId}` });
export const calendarEventPrefix = 'CALEVENT#';
/** notes-workspace: one note. */
export const note = (userId: string, noteId: string): Key => ({ pk: userPk(userId), sk: `NOTE#${noteId}` });
export const notePrefix = 'NOTE#';
/** workspace-suite: folders (with a count of what they hold) and documents. */
export const workspaceFolder = (userId: string, folderId: string): Key => ({ pk: userPk(userId), sk: `WSFOLDER#${folderId}` });
export const workspaceFolderPrefix = 'WSFOLDER#';
export const workspaceDocument = (userId: string, documentId: string): Key => ({ pk: userPk(userId), sk: `WSDOC#${documentId}` });
export const workspaceDocumentPrefix = 'WSDOC#';
/** file-manager: file metadata (the bytes are in object storage) and the account's bytes-used counter. */
export const storedFile = (userId: string, fileId: string): Key => ({ pk: userPk(userId), sk: `FILE#${fileId}` });
export const storedFilePrefix = 'FILE#';
export const fileStorageUsage = (userId: string): Key => ({ pk: userPk(userId), sk: 'FILESTORAGE' });
/** file-manager: an upload by URL, from the URL's issue until its confirmation (TTL after). */
export const pendingUpload = (userId: string, fileId: string): Key => ({ pk: userPk(userId), sk: `FILEUPLOAD#${fileId}` });
/** treasury: a wallet address the user tracks besides the account's own wallet. */
export const treasuryWallet = (userId: string, address: string): Key => ({ pk: userPk(userId), sk: `TREASURY#${address.toLowerCase()}` });
export const treasuryWalletPrefix = 'TREASURY#';
export const treasuryWalletCount = (userId: string): Key => ({ pk: userPk(userId), sk: 'TREASURYCOUNT' });
/** royalty-tracker: one imported royalty statement line. */
export const royaltyStatement = (userId: string, statementId: string): Key => ({ pk: userPk(userId), sk: `ROYALTY#${statementId}` });
export const royaltyStatementPrefix = 'ROYALTY#';
/** dj-streaming: the agent's live-set state, and its own stream when it was not channel-provisioned. */
export const djSet = (userId: string, agentId: string): Key => ({ pk: userPk(userId), sk: `DJSET#${agentId}` });
export const djSetLog = (userId: string, agentId: string, startedAt: string): Key => ({ pk: userPk(userId), sk: `DJSETLOG#${agentId}#${startedAt}` });
export const djSetLogPrefix = (agentId: string) => `DJSETLOG#${agentId}#`;
/** Skills marketplace. The catalogue, seeded from contract/skills.ts, with its install and rating counters. */
export const catalogueSkill = (skillId: string): Key => ({ pk: 'SKILLCATALOGUE', sk: `SKILL#${skillId}` });
export const catalogueVersion = { pk: 'SKILLCATALOGUE', sk: 'VERSION' } as Key;
export const cataloguePartition = 'SKILLCATALOGUE';
/** Skills installed on one agent, kept in the same transaction as each install and uninstall (plan limit). Not `SKILL#…`: that prefix is the installs. */
export const skillQuota = (userId: string, agentId: string): Key => ({ pk: userPk(userId), sk: `SKILLQUOTA#${agentId}` });
/** A user's rating of a catalogue skill (one per user and skill). */
export const skillRating = (userId: string, skillId: string): Key => ({ pk: userPk(userId), sk: `SKILLRATING#${skillId}` });
/** track-archaeologist and setlist-oracle: the user's track library. */
export const track = (userId: string, trackId: string): Key => ({ pk: userPk(userId), sk: `TRACK#${trackId}` });
export const trackPrefix = 'TRACK#';
/** demo-submitter: one submission, sortable by time. */
export const demo = (userId: string, sortId: string): Key => ({ pk: userPk(userId), sk: `DEMO#${sortId}` });
export const demoPrefix = 'DEMO#';
/** event-ticketing: an event with its ticket tiers and inventory, and one order per purchase. */
export const ticketedEvent = (userId: string, eventId: string): Key => ({ pk: userPk(userId), sk: `TICKETEVENT#${eventId}` });
export const ticketedEventPrefix = 'TICKETEVENT#';
export const ticketOrder = (userId: string, orderId: string): Key => ({ pk: userPk(userId), sk: `TICKETORDER#${orderId}` });
export const ticketOrderPrefix = 'TICKETORDER#';
/** Lifecycle event log of the account's instance and agents, sortable by time: `LCEVENT#<ISO time>#<random>`. */
export const lifecycleEvent = (userId: string, sortId: string): Key => ({ pk: userPk(userId), sk: `LCEVENT#${sortId}` });
export const lifecycleEventPrefix = 'LCEVENT#';
/** The account's own webhook endpoints (instance.* and agent.* events), and the delivery log of each. */
export const userWebhook = (userId: string, endpointId: string): Key => ({ pk: userPk(userId), sk: `USERHOOK#${endpointId}` });
export const userWebhookPrefix = 'USERHOOK#';
export const userWebhookCount = (userId: string): Key => ({ pk: userPk(userId), sk: 'USERHOOKCOUNT' });
export const userWebhookDelivery = (userId: string, endpointId: string, sortId: string): Key => ({ pk: userPk(userId), sk: `HOOKLOG#${endpointId}#${sortId}` });
export const userWebhookDeliveryPrefix = (endpointId: string) => `HOOKLOG#${endpointId}#`;
/** Where one event stands at one of the account's endpoints (attempts, next retry, the event for a manual redelivery). */
export const userWebhookDeliveryState = (userId: string, endpointId: string, eventId: string): Key => ({
  pk: userPk(userId),
  sk: `HOOKSTATE#${endpointId}#${eventId}`,
});
/** Account deletion in progress: what is done so far, so the worker's retries resume where they stopped. */
export const accountDeletion = (userId: string): Key => ({ pk: userPk(userId), sk: 'DELETION' });
/** What a finished deletion did outside the platform (the card subscription it cancelled), kept after the partition is gone. */
export const deletedAccount = (userId: string): Key => ({ pk: `DELETEDACCOUNT#${userId}`, sk: 'DELETEDACCOUNT' });
/** AI model layer. Model usage of one day, agent (`-` when none) and model: tokens, cost, credits. */
export const modelUsage = (userId: string, day: string, agentId: string | undefined, modelId: string): Key => ({
  pk: userPk(userId),
  sk: `USAGE#${day}#${agentId ?? '-'}#${modelId}`,
});
export const modelUsagePrefix = 'USAGE#';
/** The plan's included model spend used in one billing period (keyed by the period's start). */
export const modelAllowance = (userId: string, periodStart: string): Key => ({ pk: userPk(userId), sk: `AIALLOWANCE#${periodStart}` });
/** A pre-paid caller with no account (the gateway's on-chain payer): its model usage per day and model. */
export const payerUsage = (payerId: string, day: string, modelId: string): Key => ({ pk: `PAYER#${payerId.toLowerCase()}`, sk: `USAGE#${day}#${modelId}` });
/** Agent-to-agent messages of one UTC day: the account's total (the plan limit) and one agent's share. */
export const a2aDay = (userId: string, day: string): Key => ({ pk: userPk(userId), sk: `A2A#${day}` });
export const a2aAgentDay = (userId: string, day: string, agentId: string): Key => ({ pk: userPk(userId), sk: `A2A#${day}#${agentId}` });
export const a2aPrefix = 'A2A#';
/** guestlist: one list per event (capacity, spots left) and its guests. */
export const guestList = (userId: string, eventId: string): Key => ({ pk: userPk(userId), sk: `GUESTLIST#${eventId}` });
export const guest = (userId: string, eventId: string, guestId: string): Key => ({ pk: userPk(userId), sk: `GUEST#${eventId}#${guestId}` });
export const guestPrefix = (eventId: string) => `GUEST#${eventId}#`;
/** event-scheduler: one scheduled announcement, sortable by its due time. */
export const scheduledPost = (userId: string, sortId: string): Key => ({ pk: userPk(userId), sk: `SCHEDPOST#${sortId}` });
export const scheduledPostPrefix = 'SCHEDPOST#';
/** venue-finder and festival-finder: the operator's imported catalogues (global, read by every account). */
export const venueEntry = (venueId: string): Key => ({ pk: 'VENUECATALOGUE', sk: venueId });
export const venuePartition = 'VENUECATALOGUE';
export const festivalEntry = (festivalId: string): Key => ({ pk: 'FESTIVALCATALOGUE', sk: festivalId });
export const festivalPartition = 'FESTIVALCATALOGUE';
/** v1 gateway: an MPP 402 challenge by its nonce, bound to plugin, price, token, recipient and chain. Payment tx hashes use `txHash`. */
export const mppChallenge = (nonce: string): Key => ({ pk: `MPPCHALLENGE#${nonce}`, sk: 'MPPCHALLENGE' });
/** v1 gateway: a prepaid single-use card receipt for one call, by the SHA-256 (hex) of its token. */
export const gatewayReceipt = (sha256Hex: string): Key => ({ pk: `GWRECEIPT#${sha256Hex}`, sk: 'GWRECEIPT' });
/** Local stack: the sort key of every account's instance item, for its start-up reconcile scan. */
export const instanceSortKey = 'INSTANCE';
/**
 * Channel skills (chat-bot, community-bot, business-messaging, business-messaging-api, team-chat):
 * a messaging app's connection, its inbound route's hook (global: the route names it, the hook
 * names the account), the messages sent and received (time-ordered), and the due index of
 * event-scheduler posts (gsi1, sharded).
 */
export const channelConnection = (userId: string, app: string): Key => ({ pk: userPk(userId), sk: `CHANCONN#${app}` });
export const channelHook = (hookId: string): Key => ({ pk: `CHANHOOK#${hookId}`, sk: 'CHANHOOK' });
export const channelMessage = (userId: string, app: string, sortId: string): Key => ({ pk: userPk(userId), sk: `CHANMSG#${app}#${sortId}` });
export const channelMessagePrefix = (app: string) => `CHANMSG#${app}#`;
export const channelProvisionPrefix = 'CHANNELS#';
export const scheduledPostDuePartition = (shard: number) => `POSTDUE#${shard}`;
/** Local card mode: a checkout session of the local card page, single use, short TTL. */
export const localCheckout = (sessionId: string): Key => ({ pk: `LOCALCHECKOUT#${sessionId}`, sk: 'LOCALCHECKOUT' });
export const localSubscription = (subscriptionId: string): Key => ({ pk: `LOCALSUBSCRIPTION#${subscriptionId}`, sk: 'LOCALSUBSCRIPTION' });
/** `/api/agent`: chat sessions (threads) per agent, ids sortable by creation time, and the messages of each, sortable by time. */
export const chatSession = (userId: string, sessionId: string): Key => ({ pk: userPk(userId), sk: `CHATSESS#${sessionId}` });
export const chatSessionPrefix = 'CHATSESS#';
export const chatSessionMessage = (userId: string, sessionId: string, sortId: string): Key => ({
  pk: userPk(userId),
  sk: `CHATSESSMSG#${sessionId}#${sortId}`,
});
export const chatSessionMessagePrefix = (sessionId: string) => `CHATSESSMSG#${sessionId}#`;
/** `/api/agent`: a per-agent secret (envelope-encrypted), delivered to the account's instance. */
export const agentCredential = (userId: string, agentId: string, name: string): Key => ({ pk: userPk(userId), sk: `AGENTCRED#${agentId}#${name}` });
export const agentCredentialPrefix = (agentId?: string) => (agentId ? `AGENTCRED#${agentId}#` : 'AGENTCRED#');
/** Per-agent log: a runtime log line of the account's instance, sortable by time: `RTLOG#<ISO time>#<seq>#<random>`. */
export const runtimeLogLine = (userId: string, sortId: string): Key => ({ pk: userPk(userId), sk: `RTLOG#${sortId}` });
export const runtimeLogPrefix = 'RTLOG#';
// --- skills: development (webhook) ---
/** webhook: one message the skill queued, by its Standard Webhooks id (a repeated id is not sent again). */
export const webhookSkillMessage = (userId: string, messageId: string): Key => ({ pk: userPk(userId), sk: `HOOKMSG#${messageId}` });
// --- skills: payments and email ---
/** usdc-payments: one transfer by its transaction hash, the account's daily limit, and what was sent on one UTC day. */
export const stablecoinTransfer = (userId: string, hash: string): Key => ({ pk: userPk(userId), sk: `PAYMENT#${hash.toLowerCase()}` });
export const stablecoinTransferPrefix = 'PAYMENT#';
export const paymentLimit = (userId: string): Key => ({ pk: userPk(userId), sk: 'PAYMENTLIMIT' });
export const paymentDay = (userId: string, day: string): Key => ({ pk: userPk(userId), sk: `PAYMENTDAY#${day}` });
/** instant-split: a split rule, and each leg of an execution (sortable by rule and execution). booking-settlement uses `booking`. */
export const splitRule = (userId: string, splitId: string): Key => ({ pk: userPk(userId), sk: `SPLITRULE#${splitId}` });
export const splitRulePrefix = 'SPLITRULE#';
export const splitLeg = (userId: string, splitId: string, executionId: string, recipient: string): Key => ({
  pk: userPk(userId),
  sk: `SPLITLEG#${splitId}#${executionId}#${recipient.toLowerCase()}`,
});
export const splitLegPrefix = 'SPLITLEG#';
/** email: one audit record per message, sortable by time, and the count sent on one UTC day. */
export const emailAudit = (userId: string, sortId: string): Key => ({ pk: userPk(userId), sk: `EMAILLOG#${sortId}` });
export const emailAuditPrefix = 'EMAILLOG#';
export const emailDay = (userId: string, day: string): Key => ({ pk: userPk(userId), sk: `EMAILDAY#${day}` });
/** Idempotency-Key: the answer kept for one key of one operation (the key's SHA-256), TTL 24 h. */
export const idempotencyRecord = (userId: string, operation: string, keySha256Hex: string): Key => ({
  pk: userPk(userId),
  sk: `IDEMPOTENCY#${operation}#${keySha256Hex}`,
});
// --- one wallet send at a time ---
/** usdc-payments, instant-split: the lease one send holds on the account's wallet from its nonce until its broadcast. */
export const walletSendLock = (userId: string): Key => ({ pk: userPk(userId), sk: 'WALLETSENDLOCK' });
// --- money moved and messages sent, per account and month ---
/** What the account's skills moved and sent in one UTC month (`yyyy-mm`), for the metrics summary. */
export const outboundMonth = (userId: string, month: string): Key => ({ pk: userPk(userId), sk: `OUTBOUND#${month}` });
export const outboundMonthPrefix = 'OUTBOUND#';
// --- per-plan channel limits ---
/** Channel skills: how many messaging apps the account has connected, and the messages sent on one UTC day. */
export const channelCount = (userId: string): Key => ({ pk: userPk(userId), sk: 'CHANNELCOUNT' });
export const channelDay = (userId: string, day: string): Key => ({ pk: userPk(userId), sk: `CHANNELDAY#${day}` });
// --- autonomous agents: budgets, schedules ---
/** A monthly spending cap: `scope` is `ACCOUNT` or `AGENT#<agentId>`. */
export const budgetCap = (userId: string, scope: string): Key => ({ pk: userPk(userId), sk: `BUDGET#${scope}` });
export const budgetCapPrefix = 'BUDGET#';
/** What one scope spent (and holds reserved) in one UTC month (`YYYY-MM`), with its alert marks. */
export const budgetSpend = (userId: string, month: string, scope: string): Key => ({ pk: userPk(userId), sk: `BUDGETSPEND#${month}#${scope}` });
/** The loop breaker: one agent's count of one call signature in its window, and its spend in the current window. */
export const loopSignature = (userId: string, agentId: string, signature: string): Key => ({ pk: userPk(userId), sk: `LOOPSIG#${agentId}#${signature}` });
export const loopSignaturePrefix = (agentId: string) => `LOOPSIG#${agentId}#`;
export const loopSpend = (userId: string, agentId: string): Key => ({ pk: userPk(userId), sk: `LOOPSPEND#${agentId}` });
/** Scheduled prompts: one schedule of an agent, its runs by slot (the run id), the account's count and runs per UTC day, and the sharded due index (gsi1). */
export const schedule = (userId: string, agentId: string, scheduleId: string): Key => ({ pk: userPk(userId), sk: `SCHEDULE#${agentId}#${scheduleId}` });
export const schedulePrefix = (agentId: string) => `SCHEDULE#${agentId}#`;
export const scheduleRun = (userId: string, scheduleId: string, slot: string): Key => ({ pk: userPk(userId), sk: `SCHEDRUN#${scheduleId}#${slot}` });
export const scheduleRunPrefix = (scheduleId: string) => `SCHEDRUN#${scheduleId}#`;
export const scheduleCount = (userId: string): Key => ({ pk: userPk(userId), sk: 'SCHEDCOUNT' });
export const scheduleRunDay = (userId: string, day: string): Key => ({ pk: userPk(userId), sk: `SCHEDDAY#${day}` });
export const scheduleDuePartition = (shard: number) => `SCHEDDUE#${shard}`;
/** Idle auto-stop: the account's last activity and idle setting, in gsi1 under the due partition of its shard while a check is due. */
export const idleWatch = (userId: string): Key => ({ pk: userPk(userId), sk: 'IDLEWATCH' });
export const idleDuePartition = (shard: number) => `IDLEDUE#${shard}`;
/** Wake on demand: a message kept for an instance still waking (by its operation id), in gsi1 under its shard's due partition until delivered. */
export const wakeDelivery = (userId: string, operationId: string): Key => ({ pk: userPk(userId), sk: `WAKEDELIVERY#${operationId}` });
export const wakeDeliveryDuePartition = (shard: number) => `WAKEDUE#${shard}`;

/** An email queued through the events queue (adapters/email-queue.ts): the mailer's claim, so an SQS redelivery does not mail twice. */
export const queuedEmail = (userId: string, mailId: string): Key => ({ pk: userPk(userId), sk: `MAILSENT#${mailId}` });

/** MCP OAuth: a registered client (anonymous dynamic registration, so a global partition). */
export const oauthClient = (clientId: string): Key => ({ pk: `OAUTHCLIENT#${clientId}`, sk: 'OAUTHCLIENT' });
/** MCP OAuth: what the account granted a client; ending it ends every token issued under it. */
export const oauthGrant = (userId: string, clientId: string): Key => ({ pk: userPk(userId), sk: `OAUTHGRANT#${clientId}` });
export const oauthGrantPrefix = 'OAUTHGRANT#';
/** MCP OAuth: an access token, by its SHA-256, resolved on every MCP request. */
export const oauthAccessToken = (sha256Hex: string): Key => ({ pk: `OAUTHTOKEN#${sha256Hex}`, sk: 'OAUTHTOKEN' });
/** MCP OAuth: an authorization code and a refresh token, each by its SHA-256, taken once. */
export const oauthCode = (sha256Hex: string): Key => ({ pk: `OAUTHCODE#${sha256Hex}`, sk: 'OAUTHCODE' });
export const oauthRefresh = (sha256Hex: string): Key => ({ pk: `OAUTHREFRESH#${sha256Hex}`, sk: 'OAUTHREFRESH' });

/** The circuit breaker of one provider's model (data/model-breakers.ts), shared by every container. */
export const modelBreaker = (breakerId: string): Key => ({ pk: `MODELBREAKER#${breakerId}`, sk: 'STATE' });
/** An account's calls of one model (per agent, `-` for none) answered by a fallback since the last `model.failover` (data/model-failovers.ts). */
export const modelFailover = (userId: string, agentId: string | undefined, modelId: string): Key => ({
  pk: userPk(userId),
  sk: `MODELFAILOVER#${agentId ?? '-'}#${modelId}`,
});
export const modelFailoverPrefix = 'MODELFAILOVER#';
/** Agent checkpoints (data/checkpoints.ts): one record per checkpoint, its snapshot in file storage; the named ones of an agent are counted. */
export const checkpoint = (userId: string, agentId: string, checkpointId: string): Key => ({ pk: userPk(userId), sk: `CHECKPOINT#${agentId}#${checkpointId}` });
export const checkpointPrefix = (agentId: string) => `CHECKPOINT#${agentId}#`;
export const checkpointCount = (userId: string, agentId: string): Key => ({ pk: userPk(userId), sk: `CHECKPOINTCOUNT#${agentId}` });
