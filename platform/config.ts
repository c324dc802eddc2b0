import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { GATEWAY_PLUGIN_IDS } from '#contract/gateway-plugins';
import { PLAN_NAMES } from '#contract/plan-names';
import './zod-messages';

/**
 * The only reader of process.env, in sections. `config()` holds the core every function reads on its
 * request path (stage, log level, region, table, DynamoDB budget, deadline, JWT, rate limits...); every
 * other section has its own accessor (`cardConfig()`, `gatewayConfig()`...), built on its first call from
 * the settings groups it names and kept until `reloadConfig`. Each accessor is a pure top-level constant,
 * so a function's bundle carries only the sections its code reads, with their settings. Each variable is
 * parsed on its first read (lazySettings). Nothing is built at import: each group holds one schema
 * factory per variable, and zod/mini keeps zod classic out of the functions that need no other classic schema.
 *
 * Timing of a bad setting: in AWS a bad value outside the core fails the first request that reads
 * its section, with a ConfigError naming the variable (before, every cold start failed); the local
 * stack and tests go through `reloadConfig`, which validates every setting at once (validateAllSettings).
 */

/** A comma-separated list, trimmed, empty entries dropped. */
const commaList = () =>
  z.pipe(
    z.optional(z.string()),
    z.transform((s) =>
      (s ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  );
/** The same, lower-cased (email addresses, origins). */
const csv = () =>
  z.pipe(
    commaList(),
    z.transform((list) => list.map((x) => x.toLowerCase())),
  );
/** A comma-separated list of `item`. */
const listOf = <T extends z.core.$ZodType<unknown, string>>(item: T) => z.pipe(commaList(), z.array(item));

const bool = (fallback: boolean) =>
  z.pipe(
    z.optional(z.enum(['true', 'false', '1', '0', ''])),
    z.transform((v) => (v === undefined || v === '' ? fallback : v === 'true' || v === '1')),
  );

const pattern = (regex: RegExp, message?: string) => z.string().check(z.regex(regex, message));
const positiveInt = (fallback: number) => z._default(z.coerce.number().check(z.int(), z.positive()), fallback);
/** Digits only, read as an integer of at most `max`. */
const wholeNumber = (max: number, message?: string) =>
  z.pipe(z.pipe(pattern(/^\d+$/, message), z.transform(Number)), z.number().check(z.int(), z.maximum(max)));
const evmAddress = () => pattern(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address');
const bytes32Hex = () => pattern(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex');
const TOKEN_SETTING = /^[A-Za-z0-9]{1,11}:0x[0-9a-fA-F]{40}:\d{1,2}$/;

/** An empty variable (`X=` in an env file) reads as unset. */
const optionalText = () =>
  z.pipe(
    z.optional(z.string()),
    z.transform((v) => v?.trim() || undefined),
  );

/*
 * The settings, one schema factory per variable, in groups; the groups follow each other in the order of
 * lib/settings.ts KNOWN_SETTINGS (test/infra/settings.test.ts reads every `const *_SETTINGS = {` block
 * of this file and fails when they drift). A section follows the last group it reads.
 */
const CORE_SETTINGS = {
  STAGE: () => z._default(z.enum(['local', 'test', 'aws']), 'aws'),
  LOG_LEVEL: () => z._default(z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']), 'INFO'),
  AWS_REGION: () => z._default(z.string(), 'us-east-1'),

  TABLE_NAME: () => z._default(z.string().check(z.minLength(1)), 'agent-platform'),
  DYNAMODB_ENDPOINT: () => z.optional(z.url()),
  /**
   * Time budget of every DynamoDB call (issue 20): connecting, each attempt, and how many attempts.
   * The defaults keep the worst case (2 × 2.5 s plus backoff) far inside an API function's 29 s, so
   * a stalled table answers 503 BACKEND_UNAVAILABLE instead of holding the request.
   */
  DYNAMODB_CONNECT_TIMEOUT_MS: () => positiveInt(1000),
  DYNAMODB_REQUEST_TIMEOUT_MS: () => positiveInt(2500),
  DYNAMODB_MAX_ATTEMPTS: () => positiveInt(2),
  /** How long `GET /api/health` reuses its last database probe. */
  HEALTH_PROBE_CACHE_MS: () => z._default(z.coerce.number().check(z.int(), z.minimum(0)), 5000),
  /**
   * How long one API request may take, authentication and rate limiting included (issue 20): past
   * it the answer is 504 DEADLINE_EXCEEDED. Also capped by the function's own remaining time, and
   * outside calls (model, chain, card, email) end a margin before it so they answer with their code.
   */
  REQUEST_DEADLINE_MS: () => positiveInt(28_000),
  SQS_ENDPOINT: () => z.optional(z.url()),
  PROVISIONING_QUEUE_URL: () => z.optional(z.string()),
  EVENTS_QUEUE_URL: () => z.optional(z.string()),

  JWT_SECRET: () => z.optional(z.string()),
  JWT_ISSUER: () => z._default(z.string(), 'agent-platform'),
  JWT_AUDIENCE: () => z._default(z.string(), 'agent-platform-api'),
  APP_URL: () => z._default(z.url(), 'http://127.0.0.1:3000'),
  COOKIE_SECURE: () => bool(true),
  ADMIN_EMAILS: () => csv(),
  TESTER_EMAILS: () => csv(),
};

const KMS_SETTINGS = {
  KMS_KEY_ID: () => z.optional(z.string()),
};

const ECS_SETTINGS = {
  ECS_CLUSTER_ARN: () => z.optional(z.string()),
  ECS_TASK_DEFINITION_ARN: () => z.optional(z.string()),
  ECS_SUBNET_IDS: () => csv(),
  ECS_SECURITY_GROUP_IDS: () => csv(),
};

const RUNTIME_SETTINGS = {
  /** In AWS, the task definition's image (runtime/Dockerfile's asset unless the operator overrides it); a label locally. */
  RUNTIME_IMAGE: () => z._default(z.string(), 'agent-platform/runtime:local'),
  AGENT_DOMAIN: () => z._default(z.string(), 'agents.localhost'),
};

const REQUEST_LIMIT_SETTINGS = {
  MAX_BODY_BYTES: () => positiveInt(1024 * 1024),
  RATE_LIMITS: () => z.optional(z.string()),
};

const DATA_SETTINGS = {
  /** Wallets (spec 4.9). Folder of the local stack's data; the local master key lives in it. */
  DATA_DIR: () => z._default(z.string(), '.data'),
  /** Master key that wraps wallet data keys where there is no KMS (local stack, tests); 32 bytes, created 0600 when absent. */
  LOCAL_MASTER_KEY_FILE: () => z.optional(z.string()),
};

/** Wallet key custody: KMS in AWS, a local master key file elsewhere. */
export const keyCustodyConfig = /* @__PURE__ */ configSection([KMS_SETTINGS, DATA_SETTINGS], (e, core) => ({
  kmsKeyId: e.KMS_KEY_ID,
  /** Tests get a master key in the temp folder, never in the developer's data folder. */
  localMasterKeyFile: dataPath(core, e.DATA_DIR, e.LOCAL_MASTER_KEY_FILE, 'agent-platform-test-master.key', 'master.key'),
}));

const WALLET_SETTINGS = {
  /** Chain RPC the wallet balance is read from; unset → balance "unavailable". */
  WALLET_RPC_URL: () => z.optional(z.url()),
  /** Network name reported with wallets (the chain WALLET_RPC_URL serves). */
  WALLET_NETWORK: () => z._default(z.enum(['l2-test', 'l2-main']), 'l2-test'),
  /** Upper bound of one balance read, so a down RPC never holds a request. */
  WALLET_RPC_TIMEOUT_MS: () => positiveInt(3000),
};

export const walletConfig = /* @__PURE__ */ configSection([WALLET_SETTINGS], (e) => ({
  rpcUrl: e.WALLET_RPC_URL,
  network: e.WALLET_NETWORK,
  rpcTimeoutMs: e.WALLET_RPC_TIMEOUT_MS,
}));

const HOSTED_WALLET_SETTINGS = {
  /** Hosted-wallet provider behind /api/wallet/create; unset = not configured. `local` = keys generated here, envelope-encrypted. */
  HOSTED_WALLET_PROVIDER: () => z.optional(z.enum(['local'])),
  /** Project id the hosted wallet reports; defaults to the provider name. */
  HOSTED_WALLET_PROJECT_ID: () => z.optional(z.string().check(z.minLength(1))),
};

export const hostedWalletConfig = /* @__PURE__ */ configSection([HOSTED_WALLET_SETTINGS], (e) => ({
  provider: e.HOSTED_WALLET_PROVIDER,
  projectId: e.HOSTED_WALLET_PROJECT_ID ?? e.HOSTED_WALLET_PROVIDER,
}));

const INFRA_MCP_SETTINGS = {
  /** Hosting-platform MCP gateway (spec 4.13): where `/api/infra-mcp/docs` and `/github` redirect, and the image it names. */
  INFRA_MCP_DOCS_URL: () => z._default(z.url({ protocol: /^https$/ }), 'https://docs.infra-platform.example/mcp-server'),
  INFRA_MCP_REPO_URL: () => z._default(z.url({ protocol: /^https$/ }), 'https://code.infra-platform.example/infra-platform/mcp-server'),
  INFRA_MCP_DOCKER_IMAGE: () => z._default(z.string().check(z.minLength(1)), 'ghcr.io/infra-platform/mcp-server:latest'),
};

export const infraMcpConfig = /* @__PURE__ */ configSection([INFRA_MCP_SETTINGS], (e) => ({
  docsUrl: e.INFRA_MCP_DOCS_URL,
  repoUrl: e.INFRA_MCP_REPO_URL,
  dockerImage: e.INFRA_MCP_DOCKER_IMAGE,
}));

const REFERRAL_SETTINGS = {
  /** Accounts (issue 3). Credits granted to both users when a sign-up names a valid referral code. */
  REFERRAL_CREDITS: () => z._default(z.coerce.number().check(z.int(), z.minimum(0)), 100),
  /** Referrals credited per referrer at most (issue 9): past it a referral still links the accounts but pays nothing. */
  REFERRAL_CAP: () => z._default(z.coerce.number().check(z.int(), z.minimum(0)), 20),
};

export const referralConfig = /* @__PURE__ */ configSection([REFERRAL_SETTINGS], (e) => ({ credits: e.REFERRAL_CREDITS, cap: e.REFERRAL_CAP }));

const EMAIL_SETTINGS = {
  /** Where the local stack and tests write each outgoing email as a JSON file; default $DATA_DIR/outbox. */
  OUTBOX_DIR: () => z.optional(z.string()),
  /** Sender of account email (password reset); must be an SES-verified identity in AWS. */
  EMAIL_FROM: () => z._default(z.string().check(z.minLength(3)), 'no-reply@localhost'),
};

const BOT_CHECK_SETTINGS = {
  /** Challenge-token siteverify URL (Turnstile/reCAPTCHA wire format); unset = bot detection off (local default). */
  BOT_CHECK_VERIFY_URL: () => z.optional(z.url()),
  /** Secret sent to the siteverify URL with each token. */
  BOT_CHECK_SECRET: () => z.optional(z.string()),
};

export const botCheckConfig = /* @__PURE__ */ configSection([BOT_CHECK_SETTINGS], (e) => ({ verifyUrl: e.BOT_CHECK_VERIFY_URL, secret: e.BOT_CHECK_SECRET }));

const SIGN_IN_TIMING_SETTINGS = {
  /** Forgot-password answers take at least this long, known email or not, so timing reveals nothing. */
  FORGOT_PASSWORD_MIN_MS: () => z._default(z.coerce.number().check(z.int(), z.minimum(0)), 300),
  /** Sign-in from an unfamiliar address while the account's failure cap is reached waits this long when bot detection is off. */
  SIGN_IN_CAPPED_DELAY_MS: () => z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(30000)), 3000),
};

export const signInTimingConfig = /* @__PURE__ */ configSection([SIGN_IN_TIMING_SETTINGS], (e) => ({
  forgotPasswordMinMs: e.FORGOT_PASSWORD_MIN_MS,
  signInCappedDelayMs: e.SIGN_IN_CAPPED_DELAY_MS,
}));

const WEBHOOK_SETTINGS = {
  /** Webhook receivers (spec 6): comma-separated URLs; every event is POSTed to each. Unset = no delivery. */
  WEBHOOK_ENDPOINTS: () => listOf(z.url({ protocol: /^https?$/ })),
  /** Standard Webhooks signing secret, `whsec_` + base64 of the key. */
  WEBHOOK_SECRET: () => z.optional(pattern(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'must be whsec_ followed by base64')),
  /**
   * Waits before each retry of a failed webhook delivery, in ms, comma-separated (issue 20): the
   * default is the Standard Webhooks schedule, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (8 attempts
   * over 27.6 hours). Tests shorten it; in AWS the schedule must cover at least 24 hours.
   */
  WEBHOOK_RETRY_SCHEDULE_MS: () => z.pipe(commaList(), z.array(wholeNumber(7 * 24 * 3600_000, 'milliseconds')).check(z.maxLength(30))),
  /** An account endpoint whose deliveries failed without a success for this long is disabled and its owner mailed (3 days; at least a day in AWS). */
  WEBHOOK_DISABLE_AFTER_MS: () => positiveInt(3 * 24 * 3600_000),
};

/** Standard Webhooks' retry schedule (as Svix runs it): after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** A shortened schedule or disable window is for tests and the local stack: in AWS it would drop events after a short outage. */
export const webhooksConfig = /* @__PURE__ */ configSection([WEBHOOK_SETTINGS], (e, core) => {
  const DAY_MS = 24 * 3600_000;
  if (core.inAws) {
    const total = e.WEBHOOK_RETRY_SCHEDULE_MS.reduce((sum, ms) => sum + ms, 0);
    if (e.WEBHOOK_RETRY_SCHEDULE_MS.length && total < DAY_MS) {
      throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE_MS must cover at least 24 hours in AWS (it covers ${Math.round(total / 60_000)} minutes)`);
    }
    if (e.WEBHOOK_DISABLE_AFTER_MS < DAY_MS) throw new ConfigError('WEBHOOK_DISABLE_AFTER_MS must be at least a day (86400000) in AWS');
  }
  return {
    endpoints: e.WEBHOOK_ENDPOINTS,
    secret: e.WEBHOOK_SECRET,
    retryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE_MS.length ? e.WEBHOOK_RETRY_SCHEDULE_MS : DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
    disableAfterMs: e.WEBHOOK_DISABLE_AFTER_MS,
  };
});

const CARD_SETTINGS = {
  /**
   * Card payments (spec 2.16, 4.14) through the processor's official SDK. Unset secret key or price
   * → the checkout routes answer 503 CARD_NOT_CONFIGURED; unset webhook secret → the webhook does.
   */
  CARD_SECRET_KEY: () => optionalText(),
  /** Signing secret of the card webhook endpoint (`whsec_...`); the raw body is verified with it. */
  CARD_WEBHOOK_SECRET: () => optionalText(),
  /** Largest accepted age of a webhook signature, in seconds (the SDK's default is 300). */
  CARD_WEBHOOK_TOLERANCE_SECONDS: () => positiveInt(300),
  /** API host, port and protocol of the processor: only for a fake server on loopback (tests, demos). */
  CARD_API_HOST: () => optionalText(),
  CARD_API_PORT: () => z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(65535))),
  CARD_API_PROTOCOL: () => z.optional(z.enum(['http', 'https'])),
  /** Upper bound of one processor API call, so a slow processor never holds a request to the Lambda limit. */
  CARD_TIMEOUT_MS: () => positiveInt(10_000),
  /** Recurring price id of each plan: CARD_PRICE_<PLAN>, or one JSON map CARD_PRICES {"solo":"price_..."} (a single variable wins). */
  CARD_PRICES: () => optionalText(),
  CARD_PRICE_LABEL: () => optionalText(),
  CARD_PRICE_SOLO: () => optionalText(),
  CARD_PRICE_COLLECTIVE: () => optionalText(),
  CARD_PRICE_NETWORK: () => optionalText(),
  /** Credit packs on sale, JSON {"price_...": credits}: the only price ids /api/card/credits accepts. */
  CARD_CREDIT_PRICES: () => optionalText(),
  /** One-off price id of 1 GB of extra agent storage (the checkout quantity is the GB bought). */
  CARD_STORAGE_PRICE: () => optionalText(),
  /**
   * Local stack only (issue 17): `local` replaces the processor with a checkout page served by the
   * local server, which completes the session and posts a signed webhook; refused in AWS.
   */
  CARD_MODE: () => z._default(z.enum(['processor', 'local']), 'processor'),
};

const cardPlanPrices = () => z.partialRecord(z.enum(PLAN_NAMES), z.string().check(z.minLength(1)));
const cardCreditPrices = () => z.record(pattern(/^[A-Za-z0-9_-]{1,128}$/), z.number().check(z.int(), z.positive()));

/** Card settings; the return pages of a checkout are on the application's origin. */
export const cardConfig = /* @__PURE__ */ configSection([CARD_SETTINGS], (e, core) => {
  if (e.CARD_MODE === 'local' && core.inAws) throw new ConfigError('CARD_MODE=local is for the local stack only: it takes no payment, so it is refused in AWS');
  const fromMap = jsonSetting('CARD_PRICES', e.CARD_PRICES, cardPlanPrices) ?? {};
  const single = { label: e.CARD_PRICE_LABEL, solo: e.CARD_PRICE_SOLO, collective: e.CARD_PRICE_COLLECTIVE, network: e.CARD_PRICE_NETWORK };
  const planPrices: Partial<Record<keyof typeof single, string>> = { ...fromMap };
  for (const [plan, price] of Object.entries(single) as [keyof typeof single, string | undefined][]) if (price) planPrices[plan] = price;
  const billingPage = new URL('/settings/billing', core.appUrl);
  return {
    mode: e.CARD_MODE,
    secretKey: e.CARD_SECRET_KEY,
    webhookSecret: e.CARD_WEBHOOK_SECRET,
    webhookToleranceSeconds: e.CARD_WEBHOOK_TOLERANCE_SECONDS,
    api: { host: e.CARD_API_HOST, port: e.CARD_API_PORT, protocol: e.CARD_API_PROTOCOL },
    timeoutMs: e.CARD_TIMEOUT_MS,
    planPrices,
    creditPrices: jsonSetting('CARD_CREDIT_PRICES', e.CARD_CREDIT_PRICES, cardCreditPrices) ?? {},
    storagePrice: e.CARD_STORAGE_PRICE,
    /** The processor replaces `{CHECKOUT_SESSION_ID}` with the session id. */
    successUrl: `${billingPage.href}?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
    cancelUrl: `${billingPage.href}?checkout=cancelled`,
  };
});
export type CardConfig = ReturnType<typeof cardConfig>;

const OAUTH_SETTINGS = {
  /**
   * OAuth sign-in (issue 3). Each provider is off until its client id AND secret are set (start and
   * callback answer 503 OAUTH_NOT_CONFIGURED). The URLs default to the real providers' endpoints;
   * tests point them at a fake provider on loopback.
   */
  OAUTH_CODEHOST_CLIENT_ID: () => optionalText(),
  OAUTH_CODEHOST_CLIENT_SECRET: () => optionalText(),
  OAUTH_CODEHOST_AUTHORIZE_URL: () => z._default(z.url(), 'https://github.com/login/oauth/authorize'),
  OAUTH_CODEHOST_TOKEN_URL: () => z._default(z.url(), 'https://github.com/login/oauth/access_token'),
  /** The user record (numeric `id`, `login`, `name`) ... */
  OAUTH_CODEHOST_USERINFO_URL: () => z._default(z.url(), 'https://api.github.com/user'),
  /** ... and the email list, whose verified primary address links accounts. */
  OAUTH_CODEHOST_EMAILS_URL: () => z._default(z.url(), 'https://api.github.com/user/emails'),
  OAUTH_WEBID_CLIENT_ID: () => optionalText(),
  OAUTH_WEBID_CLIENT_SECRET: () => optionalText(),
  /** OpenID Connect issuer: the `iss` an ID token from the token endpoint must carry. */
  OAUTH_WEBID_ISSUER: () => z._default(z.url(), 'https://accounts.google.com'),
  OAUTH_WEBID_AUTHORIZE_URL: () => z._default(z.url(), 'https://accounts.google.com/o/oauth2/v2/auth'),
  OAUTH_WEBID_TOKEN_URL: () => z._default(z.url(), 'https://oauth2.googleapis.com/token'),
  OAUTH_WEBID_USERINFO_URL: () => z._default(z.url(), 'https://openidconnect.googleapis.com/v1/userinfo'),
  /** Upper bound of one call to a provider (token exchange, user info), so a slow provider never holds a request. */
  OAUTH_TIMEOUT_MS: () => positiveInt(5000),
};

export const oauthConfig = /* @__PURE__ */ configSection([OAUTH_SETTINGS], (e) => ({
  timeoutMs: e.OAUTH_TIMEOUT_MS,
  codehost: {
    clientId: e.OAUTH_CODEHOST_CLIENT_ID,
    clientSecret: e.OAUTH_CODEHOST_CLIENT_SECRET,
    authorizeUrl: e.OAUTH_CODEHOST_AUTHORIZE_URL,
    tokenUrl: e.OAUTH_CODEHOST_TOKEN_URL,
    userInfoUrl: e.OAUTH_CODEHOST_USERINFO_URL,
    emailsUrl: e.OAUTH_CODEHOST_EMAILS_URL,
  },
  webid: {
    clientId: e.OAUTH_WEBID_CLIENT_ID,
    clientSecret: e.OAUTH_WEBID_CLIENT_SECRET,
    issuer: e.OAUTH_WEBID_ISSUER,
    authorizeUrl: e.OAUTH_WEBID_AUTHORIZE_URL,
    tokenUrl: e.OAUTH_WEBID_TOKEN_URL,
    userInfoUrl: e.OAUTH_WEBID_USERINFO_URL,
  },
}));

const CHAIN_SETTINGS = {
  /**
   * Wallet sign-in (SIWE): JSON-RPC of the L2 main network (chain 8453) used to verify smart-wallet
   * signatures (ERC-1271 / ERC-6492). Unset → plain EOA signatures still verify locally; smart-wallet
   * signatures answer 503 CHAIN_UNAVAILABLE.
   */
  CHAIN_RPC_URL: () => z.optional(z.url()),
  /** Upper bound of one smart-wallet verification call; past it the sign-in answers 503. */
  CHAIN_RPC_TIMEOUT_MS: () => positiveInt(3000),
};

export const chainConfig = /* @__PURE__ */ configSection([CHAIN_SETTINGS], (e) => ({ rpcUrl: e.CHAIN_RPC_URL, rpcTimeoutMs: e.CHAIN_RPC_TIMEOUT_MS }));

const SOCIAL_SETTINGS = {
  /**
   * Decentralised-social identity (spec 4.2): `fidToken` is a JWT verified against this JWKS, with
   * this issuer and audience. Unset JWKS URL or issuer → POST /api/auth/social/verify answers 503
   * SOCIAL_NOT_CONFIGURED. The audience defaults to the host of APP_URL.
   */
  SOCIAL_JWKS_URL: () => z.optional(z.url()),
  SOCIAL_ISSUER: () => optionalText(),
  SOCIAL_AUDIENCE: () => optionalText(),
};

export const socialConfig = /* @__PURE__ */ configSection([SOCIAL_SETTINGS], (e, core) => ({
  jwksUrl: e.SOCIAL_JWKS_URL,
  issuer: e.SOCIAL_ISSUER,
  audience: e.SOCIAL_AUDIENCE ?? new URL(core.appUrl).host,
}));

const GATING_SETTINGS = {
  /**
   * Token gating (spec 4.2): ERC-20 contract on the L2 main network whose balance gates access.
   * Unset → gating is off (everyone has access, `tokenGated: false`).
   */
  GATING_TOKEN_ADDRESS: () => z.optional(pattern(/^0x[0-9a-fA-F]{40}$/)),
  /** Minimum balance, an integer in the token's smallest unit. */
  GATING_MIN_BALANCE: () => z._default(pattern(/^\d+$/), '1'),
  /** Symbol reported as `token`. */
  GATING_TOKEN_SYMBOL: () => z._default(z.string().check(z.minLength(1), z.maxLength(32)), 'TOKEN'),
  /** JSON-RPC the balance is read from (may carry a provider key); default CHAIN_RPC_URL, then the public endpoint. */
  GATING_RPC_URL: () => z.optional(z.url()),
  /** The credential-free RPC URL reported as `rpcEndpoint` (never GATING_RPC_URL, which may hold a key). */
  GATING_PUBLIC_RPC_URL: () => z._default(z.url(), 'https://mainnet.base.org'),
};

export const gatingConfig = /* @__PURE__ */ configSection([GATING_SETTINGS, CHAIN_SETTINGS], (e) => ({
  tokenAddress: e.GATING_TOKEN_ADDRESS,
  minBalance: e.GATING_MIN_BALANCE,
  tokenSymbol: e.GATING_TOKEN_SYMBOL,
  rpcUrl: e.GATING_RPC_URL ?? e.CHAIN_RPC_URL ?? e.GATING_PUBLIC_RPC_URL,
  publicRpcUrl: e.GATING_PUBLIC_RPC_URL,
}));

const MODEL_SETTINGS = {
  /** Agents, instances and provisioning (issue 5). OpenAI-compatible model endpoint of the platform's model layer (e.g. https://api.openai.com/v1); unset → chat answers MODEL_NOT_CONFIGURED. */
  MODEL_API_BASE_URL: () => z.optional(z.url()),
  /** Bearer key sent to MODEL_API_BASE_URL; never handed to agent runtimes. */
  MODEL_API_KEY: () => optionalText(),
  /** Upper bound of one model call. */
  MODEL_API_TIMEOUT_MS: () => positiveInt(60_000),
};

/** Agents, instances and provisioning (issue 5). */
export const modelConfig = /* @__PURE__ */ configSection([MODEL_SETTINGS], (e) => ({
  baseUrl: e.MODEL_API_BASE_URL,
  apiKey: e.MODEL_API_KEY,
  timeoutMs: e.MODEL_API_TIMEOUT_MS,
}));

const AI_SETTINGS = {
  /**
   * AI model layer (issue 10). Direct providers: a key enables the vendor's own API for its catalogue
   * models (direct wins over the MODEL_API_BASE_URL aggregator); the base URLs are for proxies and fakes.
   */
  OPENAI_API_KEY: () => optionalText(),
  OPENAI_BASE_URL: () => z.optional(z.url()),
  ANTHROPIC_API_KEY: () => optionalText(),
  ANTHROPIC_BASE_URL: () => z.optional(z.url()),
  GOOGLE_API_KEY: () => optionalText(),
  GOOGLE_BASE_URL: () => z.optional(z.url()),
  /** The model catalogue as JSON (same shape as domain/models/catalogue.ts); unset → the versioned file. */
  AI_CATALOGUE: () => optionalText(),
};

/** AI model layer (issue 10): direct providers and the operator's catalogue (parsed by domain/models/catalogue.ts). */
export const aiConfig = /* @__PURE__ */ configSection([AI_SETTINGS], (e) => ({
  openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL },
  anthropic: { apiKey: e.ANTHROPIC_API_KEY, baseUrl: e.ANTHROPIC_BASE_URL },
  google: { apiKey: e.GOOGLE_API_KEY, baseUrl: e.GOOGLE_BASE_URL },
  catalogueJson: e.AI_CATALOGUE,
}));

const PROVISIONING_SETTINGS = {
  /** Dead-letter queue of the provisioning queue: the local stack polls it into the provisioner's DLQ handler. */
  PROVISIONING_DLQ_URL: () => z.optional(z.string()),
  /** How instances are launched: `ecs` (Fargate RunTask) or `local` (child processes running runtime/). Default: ecs in AWS, local elsewhere. */
  LAUNCHER: () => z.optional(z.enum(['ecs', 'local'])),
  /** Runtime version label of new and updated instances (reported by `runtimeVersion`). */
  RUNTIME_VERSION: () => z._default(pattern(/^[0-9A-Za-z][0-9A-Za-z._+-]{0,63}$/), '1.0.0'),
  /** Comma-separated container images an update may move to, besides RUNTIME_IMAGE. */
  APPROVED_RUNTIME_IMAGES: () => csv(),
  /** Readiness: health probes of a launched instance before it counts as never healthy, and the pause between them. */
  PROVISION_HEALTH_ATTEMPTS: () => positiveInt(60),
  PROVISION_HEALTH_INTERVAL_MS: () => positiveInt(1000),
  /** Base URL agent runtimes use to reach the platform API (state, messages, model layer); default APP_URL. */
  RUNTIME_PLATFORM_URL: () => z.optional(z.url()),
  /** Local launcher: the runtime entry file it runs (default runtime/server.ts). */
  LOCAL_RUNTIME_ENTRY: () => z.optional(z.string()),
};

/** Agents, instances and provisioning (issue 5): where and how agent runtimes are launched. */
export const instanceConfig = /* @__PURE__ */ configSection([ECS_SETTINGS, RUNTIME_SETTINGS, PROVISIONING_SETTINGS], (e, core) => ({
  ecs: {
    clusterArn: e.ECS_CLUSTER_ARN,
    taskDefinitionArn: e.ECS_TASK_DEFINITION_ARN,
    subnetIds: e.ECS_SUBNET_IDS,
    securityGroupIds: e.ECS_SECURITY_GROUP_IDS,
  },
  runtimeImage: e.RUNTIME_IMAGE,
  agentDomain: e.AGENT_DOMAIN,
  provisioningDlqUrl: e.PROVISIONING_DLQ_URL,
  launcher: e.LAUNCHER ?? (core.stage === 'aws' ? 'ecs' : 'local'),
  runtimeVersion: e.RUNTIME_VERSION,
  approvedRuntimeImages: [e.RUNTIME_IMAGE, ...e.APPROVED_RUNTIME_IMAGES],
  provisionHealth: { attempts: e.PROVISION_HEALTH_ATTEMPTS, intervalMs: e.PROVISION_HEALTH_INTERVAL_MS },
  runtimePlatformUrl: e.RUNTIME_PLATFORM_URL ?? core.appUrl,
  localRuntimeEntry: e.LOCAL_RUNTIME_ENTRY,
}));

const STREAMING_SETTINGS = {
  /** Live streams of channel-provisioned agents: `local` generates and stores keys, no outside call. */
  STREAMING_PROVIDER: () => z._default(z.enum(['local']), 'local'),
  /** RTMP ingest server and HLS playback origin the local streaming adapter reports. */
  STREAMING_RTMP_URL: () => z._default(pattern(/^rtmps?:\/\//), 'rtmp://127.0.0.1:1935/live'),
  STREAMING_PLAYBACK_BASE_URL: () => z.optional(z.url()),
};

export const streamingConfig = /* @__PURE__ */ configSection([STREAMING_SETTINGS], (e, core) => ({
  provider: e.STREAMING_PROVIDER,
  rtmpUrl: e.STREAMING_RTMP_URL,
  playbackBaseUrl: e.STREAMING_PLAYBACK_BASE_URL ?? new URL('/live', core.appUrl).href,
}));

const HEARTBEAT_SETTINGS = {
  /** Heartbeat and metrics (issue 6). Local stack: how often the heartbeat sweep runs (AWS: the EventBridge schedule, every 5 minutes). */
  HEARTBEAT_TICK_MS: () => positiveInt(60_000),
  /** Most due users one sweep claims; the rest stay due for the next run. */
  HEARTBEAT_MAX_USERS_PER_RUN: () => positiveInt(1000),
  /** Users checked at once in a sweep (each check waits on an instance with short timeouts). */
  HEARTBEAT_CONCURRENCY: () => positiveInt(16),
};

/** Heartbeat and metrics (issue 6). */
export const heartbeatConfig = /* @__PURE__ */ configSection([HEARTBEAT_SETTINGS], (e) => ({
  tickMs: e.HEARTBEAT_TICK_MS,
  maxUsersPerRun: e.HEARTBEAT_MAX_USERS_PER_RUN,
  concurrency: e.HEARTBEAT_CONCURRENCY,
}));

const METRICS_SETTINGS = {
  /** Storage quota GET /api/metrics reports the table size against, in MB. */
  METRICS_STORAGE_QUOTA_MB: () => positiveInt(25_600),
};

export const metricsConfig = /* @__PURE__ */ configSection([METRICS_SETTINGS], (e) => ({ storageQuotaMb: e.METRICS_STORAGE_QUOTA_MB }));

const TREASURY_SETTINGS = {
  /** Skills of issue 12 part B. treasury: ERC-20 tokens whose balances it reads besides the native coin, `SYMBOL:0xcontract:decimals` comma-separated (read through WALLET_RPC_URL). */
  TREASURY_TOKENS: () => listOf(pattern(TOKEN_SETTING, 'SYMBOL:0xcontract:decimals')),
};

const FILES_SETTINGS = {
  /** file-manager: where file bytes are kept. `local` = a folder (FILES_DIR); `s3` = the bucket FILES_BUCKET (the stack sets both). */
  FILE_STORAGE: () => z._default(z.enum(['local', 's3']), 'local'),
  /** Folder of the local file storage; default $DATA_DIR/files. */
  FILES_DIR: () => z.optional(z.string()),
  /** The S3 bucket of FILE_STORAGE=s3. */
  FILES_BUCKET: () => z.optional(pattern(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name')),
  /** Another S3 endpoint (path-style), for an S3-compatible store or a loopback fake in tests; default AWS's. */
  FILES_S3_ENDPOINT: () => z.optional(z.url()),
  /** How long a presigned upload URL of file-manager stays valid. */
  FILE_UPLOAD_URL_TTL_SECONDS: () => positiveInt(900),
  /** How long a signed download URL of a stored file (visual-synthesizer's images) stays valid. */
  FILE_DOWNLOAD_URL_TTL_SECONDS: () => positiveInt(3600),
};

export const filesConfig = /* @__PURE__ */ configSection([FILES_SETTINGS, DATA_SETTINGS], (e, core) => {
  if (e.FILE_STORAGE === 's3' && !e.FILES_BUCKET) throw new ConfigError('FILE_STORAGE=s3 needs FILES_BUCKET');
  return {
    storage: e.FILE_STORAGE,
    dir: dataPath(core, e.DATA_DIR, e.FILES_DIR, 'agent-platform-test-files', 'files'),
    bucket: e.FILES_BUCKET,
    s3Endpoint: e.FILES_S3_ENDPOINT,
    uploadUrlTtlSeconds: e.FILE_UPLOAD_URL_TTL_SECONDS,
    downloadUrlTtlSeconds: e.FILE_DOWNLOAD_URL_TTL_SECONDS,
  };
});

const PAYMENT_TOKEN_SETTINGS = {
  /** Skills of issue 13 part A. usdc-payments and instant-split: the stablecoin they send, `SYMBOL:0xcontract:decimals` (through WALLET_RPC_URL); unset = payments not configured. */
  PAYMENT_TOKEN: () => z.optional(pattern(TOKEN_SETTING, 'SYMBOL:0xcontract:decimals')),
};

/** `SYMBOL:0xcontract:decimals`, as the token settings give it. */
function tokenSetting(value: string) {
  const [symbol, address, decimals] = value.split(':');
  return { symbol: symbol!, address: address as `0x${string}`, decimals: Number(decimals) };
}

/** Skills of issue 12 part B (treasury) and issue 13 part A (the stablecoin usdc-payments and instant-split send). */
export const skillTokensConfig = /* @__PURE__ */ configSection([TREASURY_SETTINGS, PAYMENT_TOKEN_SETTINGS], (e) => ({
  treasuryTokens: e.TREASURY_TOKENS.map(tokenSetting),
  paymentToken: e.PAYMENT_TOKEN ? tokenSetting(e.PAYMENT_TOKEN) : undefined,
}));

const GATEWAY_SETTINGS = {
  /**
   * v1 gateway and machine payments (issue 11, spec 4.12). MPP is on only with both MPP_RECIPIENT and
   * MPP_RPC_URL; otherwise the 402 says machine payments are unavailable and credentials get MPP_NOT_CONFIGURED.
   */
  MPP_CHAIN_ID: () => positiveInt(4217),
  MPP_RPC_URL: () => z.optional(z.url()),
  MPP_RECIPIENT: () => z.optional(evmAddress()),
  /** TIP-20 token the price is paid in (6 decimals); default pathUSD. */
  MPP_CURRENCY: () => z._default(evmAddress(), '0x20c0000000000000000000000000000000000000'),
  MPP_CONFIRMATIONS: () => positiveInt(1),
  MPP_CHALLENGE_TTL_SECONDS: () => positiveInt(300),
  /** Upper bound of one chain RPC call while verifying a payment; past it the gateway answers 503. */
  MPP_RPC_TIMEOUT_MS: () => positiveInt(3000),
  /** JSON plugin → decimal price in the payment token, e.g. {"agent":"0.05"}; unlisted plugins keep DEFAULT_GATEWAY_PRICES. */
  GATEWAY_PRICES: () => optionalText(),
  /** Comma-separated origins browsers may call the gateway from (CORS); default the origin of APP_URL. `*` allows any. */
  GATEWAY_ALLOWED_ORIGINS: () => csv(),
  /**
   * One-off card payment of a gateway call (issue 11): JSON plugin → price in minor units of the card
   * billing currency (GBP pence), e.g. {"agent":120}; unlisted plugins are priced from GATEWAY_PRICES
   * × GATEWAY_CARD_RATE, rounded up to a whole penny and at least the processor's minimum charge.
   */
  GATEWAY_CARD_PRICES: () => optionalText(),
  /** Billing-currency units charged per payment-token unit (a decimal, at most 6 decimals); 1 never charges less than the token price. */
  GATEWAY_CARD_RATE: () => z._default(pattern(/^\d+(\.\d{1,6})?$/, 'a decimal rate with at most 6 decimals'), '1'),
};

/** Gateway prices in the payment token (decimal strings, at most 6 decimals: TIP-20 base units). */
export const DEFAULT_GATEWAY_PRICES = { 'generate-text': '0.01', agent: '0.05', tts: '0.02', stt: '0.02' } as const;
const gatewayPrices = () =>
  z.partialRecord(
    z.enum(GATEWAY_PLUGIN_IDS),
    z.pipe(z.union([z.string(), z.pipe(z.number(), z.transform(String))]), pattern(/^\d+(\.\d{1,6})?$/, 'a decimal price with at most 6 decimals')),
  );
/** Card checkouts are priced in GBP (spec 2.16), whatever currency the plan table lists; Stripe's smallest GBP charge is 30p. */
export const CARD_CURRENCY = 'gbp';
export const CARD_MINIMUM_CHARGE_MINOR = 30;
const gatewayCardPrices = () =>
  z.partialRecord(z.enum(GATEWAY_PLUGIN_IDS), z.number().check(z.int(), z.minimum(CARD_MINIMUM_CHARGE_MINOR), z.maximum(100_000_000)));

/** v1 gateway (issue 11): prices, CORS origins and the MPP chain settings. */
export const gatewayConfig = /* @__PURE__ */ configSection([GATEWAY_SETTINGS], (e, core) => {
  const prices: Record<string, string> = { ...DEFAULT_GATEWAY_PRICES, ...jsonSetting('GATEWAY_PRICES', e.GATEWAY_PRICES, gatewayPrices) };
  return {
    prices,
    allowedOrigins: e.GATEWAY_ALLOWED_ORIGINS.length ? e.GATEWAY_ALLOWED_ORIGINS : [new URL(core.appUrl).origin],
    card: { prices: jsonSetting('GATEWAY_CARD_PRICES', e.GATEWAY_CARD_PRICES, gatewayCardPrices) ?? {}, rate: e.GATEWAY_CARD_RATE },
    mpp: {
      chainId: e.MPP_CHAIN_ID,
      rpcUrl: e.MPP_RPC_URL,
      recipient: e.MPP_RECIPIENT?.toLowerCase(),
      currency: e.MPP_CURRENCY.toLowerCase(),
      confirmations: e.MPP_CONFIRMATIONS,
      challengeTtlSeconds: e.MPP_CHALLENGE_TTL_SECONDS,
      rpcTimeoutMs: e.MPP_RPC_TIMEOUT_MS,
    },
  };
});

const EAS_SETTINGS = {
  /**
   * Agent verification with EAS (issue 9): the attestation is read from this EAS contract (default the
   * L2 predeploy) through EAS_RPC_URL (default CHAIN_RPC_URL) and must carry EAS_SCHEMA_UID. Unset schema
   * or RPC → `eas` verification answers 503 EAS_NOT_CONFIGURED.
   */
  EAS_CONTRACT_ADDRESS: () => z._default(evmAddress(), '0x4200000000000000000000000000000000000021'),
  EAS_SCHEMA_UID: () => z.optional(bytes32Hex()),
  EAS_RPC_URL: () => z.optional(z.url()),
};

export const easConfig = /* @__PURE__ */ configSection([EAS_SETTINGS, CHAIN_SETTINGS], (e) => ({
  contractAddress: e.EAS_CONTRACT_ADDRESS as `0x${string}`,
  schemaUid: e.EAS_SCHEMA_UID,
  rpcUrl: e.EAS_RPC_URL ?? e.CHAIN_RPC_URL,
}));

const CHANNEL_SETTINGS = {
  /** Channel skills of issue 13 part C: each messaging app's HTTP API (tests point them at loopback fakes). */
  CHANNEL_TELEGRAM_API_URL: () => z._default(z.url(), 'https://api.telegram.org'),
  CHANNEL_DISCORD_API_URL: () => z._default(z.url(), 'https://discord.com/api/v10'),
  CHANNEL_WHATSAPP_API_URL: () => z._default(z.url(), 'https://graph.facebook.com/v21.0'),
  CHANNEL_SLACK_API_URL: () => z._default(z.url(), 'https://slack.com/api'),
  /** Bound on one call to a messaging app. */
  CHANNEL_TIMEOUT_MS: () => positiveInt(10_000),
};

/** Channel skills of issue 13 part C. */
export const channelsConfig = /* @__PURE__ */ configSection([CHANNEL_SETTINGS], (e) => ({
  telegramUrl: e.CHANNEL_TELEGRAM_API_URL,
  discordUrl: e.CHANNEL_DISCORD_API_URL,
  whatsappUrl: e.CHANNEL_WHATSAPP_API_URL,
  slackUrl: e.CHANNEL_SLACK_API_URL,
  timeoutMs: e.CHANNEL_TIMEOUT_MS,
}));

const FETCH_SETTINGS = {
  /**
   * Skills of issue 13 part B (webhook, browser): user-supplied URLs go through the guarded fetch,
   * which refuses loopback. Tests and the local stack list their loopback fakes here, exactly
   * (`127.0.0.1:8080`, `[::1]:8080`); refused in AWS.
   */
  FETCH_ALLOWED_LOOPBACK: () => listOf(pattern(/^(127\.0\.0\.1|\[::1\]):\d{1,5}$/, '127.0.0.1:<port> or [::1]:<port>')),
};

/** The guarded fetch of user-supplied URLs (issue 13 part B). */
export const fetchConfig = /* @__PURE__ */ configSection([FETCH_SETTINGS], (e, core) => {
  const allowedLoopback = e.FETCH_ALLOWED_LOOPBACK;
  if (allowedLoopback.length && core.inAws) {
    throw new ConfigError('FETCH_ALLOWED_LOOPBACK is for tests and the local stack only: in AWS it would open the network behind the platform to user URLs');
  }
  return { allowedLoopback };
});

const COINBASE_VERIFICATION_SETTINGS = {
  /**
   * `coinbase` agent verification (issue 18): the wallet must hold Coinbase's "Verified Account" attestation on Base, found
   * through Coinbase's attestation indexer and read from EAS (EAS_CONTRACT_ADDRESS, EAS_RPC_URL). Defaults: Base mainnet
   * (github.com/coinbase/verifications).
   */
  COINBASE_VERIFICATION_INDEXER: () => z._default(evmAddress(), '0x2c7eE1E5f416dfF40054c27A62f7B357C4E8619C'),
  COINBASE_VERIFICATION_ATTESTER: () => z._default(evmAddress(), '0x357458739F90461b99789350868CD7CF330Dd7EE'),
  COINBASE_VERIFICATION_SCHEMA_UID: () => z._default(bytes32Hex(), '0xf8b05c79f090979bf4a80270aba232dff11a10d9ca55c4f88de95317970f0de9'),
};

export const coinbaseVerificationConfig = /* @__PURE__ */ configSection([COINBASE_VERIFICATION_SETTINGS], (e) => ({
  indexer: e.COINBASE_VERIFICATION_INDEXER as `0x${string}`,
  attester: e.COINBASE_VERIFICATION_ATTESTER as `0x${string}`,
  schemaUid: e.COINBASE_VERIFICATION_SCHEMA_UID as `0x${string}`,
}));

const ENS_SETTINGS = {
  /** `ens` agent verification: the name must resolve to the signing wallet on this chain (Ethereum mainnet) through the ENS Universal Resolver. Unset → 503 ENS_NOT_CONFIGURED. */
  ENS_RPC_URL: () => z.optional(z.url()),
  ENS_UNIVERSAL_RESOLVER: () => z._default(evmAddress(), '0xeeeeeeee14d718c2b47d9923deab1335e144eeee'),
};

export const ensConfig = /* @__PURE__ */ configSection([ENS_SETTINGS], (e) => ({
  rpcUrl: e.ENS_RPC_URL,
  universalResolver: e.ENS_UNIVERSAL_RESOLVER as `0x${string}`,
}));

const HEALING_SETTINGS = {
  /**
   * Healing (issue 20): an instance that exits unexpectedly is relaunched after these pauses, one per
   * consecutive relaunch (the last repeats; at most 900, SQS's longest delay), at most
   * INSTANCE_RELAUNCHES_PER_HOUR times in an hour; past that it is `error` with the exit's reason.
   */
  INSTANCE_RELAUNCHES_PER_HOUR: () => positiveInt(5),
  INSTANCE_RELAUNCH_BACKOFF_SECONDS: () =>
    z.pipe(
      listOf(wholeNumber(900)),
      z.transform((list) => (list.length ? list : [1, 5, 30, 120, 300])),
    ),
};

const AWS_FAKE_SETTINGS = {
  /** Another ECS / KMS endpoint than AWS's (a loopback fake in tests); the credentials are the local ones then. */
  ECS_ENDPOINT: () => z.optional(z.url()),
  KMS_ENDPOINT: () => z.optional(z.url()),
};

/** Loopback fakes of ECS and KMS (tests); unset in AWS. */
export const awsFakesConfig = /* @__PURE__ */ configSection([AWS_FAKE_SETTINGS], (e) => {
  const local = { accessKeyId: 'local', secretAccessKey: 'local' };
  return {
    ecs: e.ECS_ENDPOINT ? { endpoint: e.ECS_ENDPOINT, credentials: local } : {},
    kms: e.KMS_ENDPOINT ? { endpoint: e.KMS_ENDPOINT, credentials: local } : {},
  };
});

const REDRIVE_SETTINGS = {
  /** No stranded work (issue 20): an agent or launch in `provisioning` this long with no live worker on it is driven again; 0 turns the heartbeat's pass off. */
  PROVISIONING_REDRIVE_AFTER_SECONDS: () => z._default(z.coerce.number().check(z.int(), z.minimum(0)), 180),
};

/** Issue 20: relaunches after unexpected exits, and the stranded-work reconciler. */
export const healingConfig = /* @__PURE__ */ configSection([HEALING_SETTINGS, REDRIVE_SETTINGS], (e) => ({
  relaunchesPerHour: e.INSTANCE_RELAUNCHES_PER_HOUR,
  backoffSeconds: e.INSTANCE_RELAUNCH_BACKOFF_SECONDS,
  provisioningRedriveAfterMs: e.PROVISIONING_REDRIVE_AFTER_SECONDS * 1000,
}));

const RUNTIME_LOG_SETTINGS = {
  /** Per-agent log in AWS (issue 18): the CloudWatch Logs group the runtime tasks write to (the stack sets it); unset = the lines the local launcher keeps. */
  RUNTIME_LOG_GROUP: () => z.optional(z.string().check(z.minLength(1), z.maxLength(512))),
  /** Another CloudWatch Logs endpoint, for a loopback fake in tests; default AWS's. */
  CLOUDWATCH_LOGS_ENDPOINT: () => z.optional(z.url()),
};

/** Where the per-agent log reads runtime output in AWS (issue 18). */
export const runtimeLogsConfig = /* @__PURE__ */ configSection([RUNTIME_LOG_SETTINGS], (e) => ({
  group: e.RUNTIME_LOG_GROUP,
  endpoint: e.CLOUDWATCH_LOGS_ENDPOINT,
}));

const SES_SETTINGS = {
  /** Email through SES v2 at this endpoint outside AWS (a loopback fake in tests); refused in AWS, where SES is AWS's own. */
  SES_ENDPOINT: () => z.optional(z.url()),
};

/** Tests write their mail to the temp folder, never into the developer's data folder. */
export const emailConfig = /* @__PURE__ */ configSection([EMAIL_SETTINGS, SES_SETTINGS, DATA_SETTINGS], (e, core) => {
  if (e.SES_ENDPOINT && core.inAws) throw new ConfigError('SES_ENDPOINT is for tests and the local stack only: in AWS email goes to SES itself');
  return {
    from: e.EMAIL_FROM,
    sesEndpoint: e.SES_ENDPOINT,
    outboxDir: dataPath(core, e.DATA_DIR, e.OUTBOX_DIR, 'agent-platform-test-outbox', 'outbox'),
  };
});

const WAKE_SETTINGS = {
  /** Wake on demand (issue 22): how long a message to an idle-stopped agent waits for its wake before 202 (under API Gateway's 29 s, the model's time left over). */
  WAKE_WAIT_SECONDS: () => z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(25)), 20),
};

/** Issue 22: the bounded wait of a message that wakes an idle-stopped instance. */
export const wakeConfig = /* @__PURE__ */ configSection([WAKE_SETTINGS], (e) => ({ waitMs: e.WAKE_WAIT_SECONDS * 1000 }));

export type RateLimitRule = { limit: number; windowSeconds: number; by: 'user' | 'ip' };

/**
 * Section 8 of the spec. The per-IP numbers are ours (the spec leaves them open): generous enough
 * for a shared office or campus address, tight enough to stop scripted sign-up or reset floods.
 * RATE_LIMITS (JSON, e.g. {"register":{"limit":5}}) overrides any of them.
 */
export const DEFAULT_RATE_LIMITS: Record<string, RateLimitRule> = {
  gateway: { limit: 100, windowSeconds: 60, by: 'user' },
  agents: { limit: 100, windowSeconds: 60, by: 'user' },
  chat: { limit: 60, windowSeconds: 60, by: 'user' },
  instance: { limit: 30, windowSeconds: 60, by: 'user' },
  provision: { limit: 30, windowSeconds: 600, by: 'ip' },
  register: { limit: 30, windowSeconds: 600, by: 'ip' },
  forgotPassword: { limit: 30, windowSeconds: 600, by: 'ip' },
  resetPassword: { limit: 30, windowSeconds: 600, by: 'ip' },
  signIn: { limit: 60, windowSeconds: 600, by: 'ip' },
  // Unauthenticated routes that each cost a call to the chain RPC (token gating).
  chainRead: { limit: 120, windowSeconds: 600, by: 'ip' },
  /**
   * Failed sign-ins (issue 9 defect 6; only failures count). `signInAddress`: per account and client address; past it that
   * address gets 429 for the account. `signInAccount`: per account across all addresses; past it an address the owner has not
   * signed in from must pass the bot check (or waits SIGN_IN_CAPPED_DELAY_MS when bot detection is off), never a refusal.
   */
  signInAddress: { limit: 5, windowSeconds: 900, by: 'user' },
  signInAccount: { limit: 20, windowSeconds: 900, by: 'user' },
  /** Reset emails per address (subject `account:<email>`); past it the answer stays the same and no email is sent, so nobody can flood an inbox. */
  forgotPasswordAccount: { limit: 3, windowSeconds: 3600, by: 'user' },
  /** Email verification (issue 9): link attempts per address, and resends per account (each one is an email). */
  verifyEmail: { limit: 30, windowSeconds: 600, by: 'ip' },
  verifyEmailResend: { limit: 5, windowSeconds: 3600, by: 'user' },
};

const rateLimitOverrides = () =>
  z.record(
    z.string(),
    z.strictObject({
      limit: z.optional(z.number().check(z.int(), z.positive())),
      windowSeconds: z.optional(z.number().check(z.int(), z.positive())),
      by: z.optional(z.enum(['user', 'ip'])),
    }),
  );

export const MIN_JWT_SECRET_BYTES = 32;

export class ConfigError extends Error {}

type SettingFactories = Record<string, () => z.core.$ZodType>;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** The parsed values of the settings of `Groups`, by name. */
type ValuesOf<Groups extends readonly SettingFactories[], All = UnionToIntersection<Groups[number]>> = {
  readonly [K in keyof All]: All[K] extends () => infer S ? (S extends z.core.$ZodType ? z.output<S> : never) : never;
};

/** The problems of one variable, `NAME: message` each; none when it parses. */
function settingProblems(name: string, factory: () => z.core.$ZodType, env: NodeJS.ProcessEnv): { problems: string[]; value?: unknown } {
  const result = z.safeParse(factory(), env[name]);
  if (result.success) return { problems: [], value: result.data };
  return { problems: result.error.issues.map((issue) => `${[name, ...issue.path].join('.')}: ${issue.message}`) };
}

/** The settings of `groups` in `env`, each variable parsed on the first read of its property, once. */
function lazySettings<Groups extends readonly SettingFactories[]>(env: NodeJS.ProcessEnv, groups: Groups): ValuesOf<Groups> {
  const settings = {};
  for (const group of groups) {
    for (const [name, factory] of Object.entries(group)) {
      Object.defineProperty(settings, name, {
        configurable: true,
        enumerable: true,
        get() {
          const { problems, value } = settingProblems(name, factory, env);
          if (problems.length) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
          Object.defineProperty(settings, name, { value, enumerable: true });
          return value;
        },
      });
    }
  }
  return settings as ValuesOf<Groups>;
}

/** Bumped by `reloadConfig`: a section built before it is built again on its next read. */
let generation = 0;

/**
 * A section of the configuration, read as `section()`: built from the settings of `groups` on its
 * first read and kept until the next `reloadConfig`. Declared `const x = /* @__PURE__ *\/ configSection(...)`
 * so that esbuild drops a section, its settings and its builder from every function that never reads it.
 */
function configSection<Groups extends readonly SettingFactories[], T>(groups: Groups, build: (e: ValuesOf<Groups>, core: Config) => T) {
  let built: { generation: number; value: T } | undefined;
  const read = (): T => {
    if (built?.generation !== generation) built = { generation, value: build(lazySettings(process.env, groups), config()) };
    return built.value;
  };
  /** For validateAllSettings: the section over `env`, kept nowhere. */
  const buildFrom = (env: NodeJS.ProcessEnv, core: Config) => build(lazySettings(env, groups), core);
  return Object.assign(read, { buildFrom });
}

/** Tests keep their files in the temp folder, never in the developer's data folder. */
function dataPath(core: Config, dataDir: string, explicit: string | undefined, testName: string, name: string) {
  return explicit ?? (core.stage === 'test' ? join(tmpdir(), testName) : join(dataDir, name));
}

/**
 * The core: what the request path of every function reads (pipeline, authentication, DynamoDB and
 * SQS clients, rate limiter, events). The scalars parse on their first read.
 */
function buildCore(env: NodeJS.ProcessEnv) {
  const e = lazySettings(env, [CORE_SETTINGS, REQUEST_LIMIT_SETTINGS]);
  if (e.JWT_SECRET !== undefined && Buffer.byteLength(e.JWT_SECRET) < MIN_JWT_SECRET_BYTES) {
    throw new ConfigError(`JWT_SECRET must be at least ${MIN_JWT_SECRET_BYTES} bytes`);
  }
  let rateLimits: Record<string, RateLimitRule> | undefined;

  return {
    stage: e.STAGE,
    /** Settings for tests and the local stack only are refused here (a function in Lambda is in AWS whatever STAGE says). */
    inAws: e.STAGE === 'aws' || env.AWS_LAMBDA_FUNCTION_NAME !== undefined,
    logLevel: e.LOG_LEVEL,
    region: e.AWS_REGION,
    tableName: e.TABLE_NAME,
    dynamoEndpoint: e.DYNAMODB_ENDPOINT,
    requestDeadlineMs: e.REQUEST_DEADLINE_MS,
    dynamoBudget: {
      connectTimeoutMs: e.DYNAMODB_CONNECT_TIMEOUT_MS,
      requestTimeoutMs: e.DYNAMODB_REQUEST_TIMEOUT_MS,
      maxAttempts: e.DYNAMODB_MAX_ATTEMPTS,
    },
    sqsEndpoint: e.SQS_ENDPOINT,
    jwt: { secret: e.JWT_SECRET, issuer: e.JWT_ISSUER, audience: e.JWT_AUDIENCE },
    /** Emulators take any credentials; in AWS the SDK's default chain is used. */
    localCredentials: e.DYNAMODB_ENDPOINT || e.SQS_ENDPOINT ? { accessKeyId: 'local', secretAccessKey: 'local' } : undefined,
    get healthProbeCacheMs() {
      return e.HEALTH_PROBE_CACHE_MS;
    },
    get provisioningQueueUrl() {
      return e.PROVISIONING_QUEUE_URL;
    },
    get eventsQueueUrl() {
      return e.EVENTS_QUEUE_URL;
    },
    get appUrl() {
      return e.APP_URL;
    },
    get cookieSecure() {
      return e.COOKIE_SECURE;
    },
    get adminEmails() {
      return e.ADMIN_EMAILS;
    },
    get testerEmails() {
      return e.TESTER_EMAILS;
    },
    get maxBodyBytes() {
      return e.MAX_BODY_BYTES;
    },
    get rateLimits() {
      rateLimits ??= rateLimitSettings(e.RATE_LIMITS);
      return rateLimits;
    },
  };
}

export type Config = ReturnType<typeof buildCore>;

let cached: Config | undefined;

/** The core settings; every other section has its own accessor (cardConfig(), gatewayConfig()...). */
export function config(): Config {
  cached ??= buildCore(process.env);
  return cached;
}

/** Every group of settings, in the order of lib/settings.ts KNOWN_SETTINGS. */
const allSettingGroups = () => [
  CORE_SETTINGS,
  KMS_SETTINGS,
  ECS_SETTINGS,
  RUNTIME_SETTINGS,
  REQUEST_LIMIT_SETTINGS,
  DATA_SETTINGS,
  WALLET_SETTINGS,
  HOSTED_WALLET_SETTINGS,
  INFRA_MCP_SETTINGS,
  REFERRAL_SETTINGS,
  EMAIL_SETTINGS,
  BOT_CHECK_SETTINGS,
  SIGN_IN_TIMING_SETTINGS,
  WEBHOOK_SETTINGS,
  CARD_SETTINGS,
  OAUTH_SETTINGS,
  CHAIN_SETTINGS,
  SOCIAL_SETTINGS,
  GATING_SETTINGS,
  MODEL_SETTINGS,
  AI_SETTINGS,
  PROVISIONING_SETTINGS,
  STREAMING_SETTINGS,
  HEARTBEAT_SETTINGS,
  METRICS_SETTINGS,
  TREASURY_SETTINGS,
  FILES_SETTINGS,
  PAYMENT_TOKEN_SETTINGS,
  GATEWAY_SETTINGS,
  EAS_SETTINGS,
  CHANNEL_SETTINGS,
  FETCH_SETTINGS,
  COINBASE_VERIFICATION_SETTINGS,
  ENS_SETTINGS,
  HEALING_SETTINGS,
  AWS_FAKE_SETTINGS,
  REDRIVE_SETTINGS,
  RUNTIME_LOG_SETTINGS,
  SES_SETTINGS,
  WAKE_SETTINGS,
];

/** Every section but the core. */
const allSections = () => [
  keyCustodyConfig,
  walletConfig,
  hostedWalletConfig,
  infraMcpConfig,
  referralConfig,
  botCheckConfig,
  signInTimingConfig,
  webhooksConfig,
  cardConfig,
  oauthConfig,
  chainConfig,
  socialConfig,
  gatingConfig,
  modelConfig,
  aiConfig,
  instanceConfig,
  streamingConfig,
  heartbeatConfig,
  metricsConfig,
  filesConfig,
  skillTokensConfig,
  gatewayConfig,
  easConfig,
  channelsConfig,
  fetchConfig,
  coinbaseVerificationConfig,
  ensConfig,
  healingConfig,
  awsFakesConfig,
  runtimeLogsConfig,
  emailConfig,
  wakeConfig,
];

/**
 * Parses every setting and builds every section, so that any bad one fails now: the local stack at
 * start (a developer sees a bad .env at once) and tests, through `reloadConfig`. No function calls
 * it (it names every section, so a function that did would carry them all).
 */
export function validateAllSettings(env: NodeJS.ProcessEnv = process.env): Config {
  const problems = allSettingGroups().flatMap((group) => Object.entries(group).flatMap(([name, factory]) => settingProblems(name, factory, env).problems));
  if (problems.length) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  const core = buildCore(env);
  for (const property of Object.keys(core) as (keyof Config)[]) void core[property];
  for (const section of allSections()) section.buildFrom(env, core);
  return core;
}

/** For the local stack and tests, which set the environment after this module loads: drops every built section and validates all settings. */
export function reloadConfig(overrides: Record<string, string | undefined> = {}): Config {
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  cached = undefined;
  generation++;
  cached = validateAllSettings(process.env);
  return cached;
}

function rateLimitSettings(json: string | undefined) {
  const overrides = jsonSetting('RATE_LIMITS', json, rateLimitOverrides) ?? {};
  const rateLimits: Record<string, RateLimitRule> = {};
  for (const [scope, rule] of Object.entries(DEFAULT_RATE_LIMITS)) rateLimits[scope] = { ...rule, ...overrides[scope] };
  return rateLimits;
}

function jsonSetting<S extends z.core.$ZodType>(name: string, raw: string | undefined, schema: () => S): z.output<S> | undefined {
  if (!raw) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError(`${name} must be JSON`);
  }
  const out = z.safeParse(schema(), value);
  if (!out.success) throw new ConfigError(`${name}: ${out.error.issues[0]?.message}`);
  return out.data;
}

/** The local stack's settings that are not the Lambda's (port, data folder). */
export function localSettings(env: NodeJS.ProcessEnv = process.env) {
  return z
    .object({
      PORT: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(65535)), 3000),
      HOST: z._default(z.string(), '127.0.0.1'),
      DATA_DIR: z._default(z.string(), '.data'),
      DYNAMODB_LOCAL_PORT: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(65535)), 0),
      /** DynamoDB Local's JVM heap cap (-Xmx), in MiB. */
      DYNAMODB_LOCAL_MAX_HEAP_MB: z._default(z.coerce.number().check(z.int(), z.minimum(64)), 512),
    })
    .parse(env);
}

/**
 * The named variables of this process's environment, for a child process that must get only an
 * allowlisted few (the local runtime launcher: PATH and the like, never the platform's secrets).
 */
export function inheritedEnv(names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
