import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVM_ADDRESS, EVM_ADDRESS_SOURCE } from '#contract/evm';
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
 * parsed on its first read (lazySettings). Nothing is built at import: each setting holds a schema
 * factory, and zod/mini keeps zod classic out of the functions that need no other classic schema.
 *
 * Every setting is declared once, as data (`Setting`), in the groups below; lib/settings.ts reads the
 * same declarations (SETTING_GROUPS) to know every setting, the secrets and who sets each one in AWS.
 *
 * Timing of a bad setting: in AWS a bad value outside the core fails the first request that reads
 * its section, with a ConfigError naming the variable (before, every cold start failed); the local
 * stack and tests go through `reloadConfig`, which validates every setting at once (validateAllSettings).
 */

/** One setting: how its variable is read, and what the stack and the operator need to know of it. */
export interface Setting {
  /** The schema of the variable's text, built on its first read. */
  readonly schema: () => z.core.$ZodType;
  /**
   * The value of an unset variable: what the local stack and the tests get unless they set it. Written as a literal, never
   * as arithmetic (`3 * 24 * 3600_000`): esbuild cannot drop a top-level expression that computes, so the whole group
   * would stay in every function (test/infra/lazy-config.test.ts).
   */
  readonly default?: unknown;
  /** A credential: in AWS it reaches a function only through the operator secret, never as a plain value. */
  readonly secret?: boolean;
  /** Set in AWS by the stack, from its own resources or a top-level context key (this says which); never by the operator. */
  readonly setByStack?: string;
  /** Meaningful only in the local stack and the tests (emulators, files, child processes, fake servers). */
  readonly localOnly?: boolean;
  readonly description?: string;
}

/** Settings by variable name. Each group is declared `as const`, so that a default is checked against its schema. */
export type SettingGroup = { readonly [name: string]: Setting };

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
/** An empty list reads as unset, so that the setting's default applies. */
const emptyAsUnset = <T extends z.core.$ZodType<unknown[]>>(list: T) =>
  z.pipe(
    list,
    z.transform((values: z.output<T>) => (values.length ? values : undefined)),
  );

/** `true`/`1` or `false`/`0`; empty reads as unset. */
const flag = () =>
  z.pipe(
    z.optional(z.enum(['true', 'false', '1', '0', ''])),
    z.transform((v) => (v === undefined || v === '' ? undefined : v === 'true' || v === '1')),
  );

const pattern = (regex: RegExp, message?: string) => z.string().check(z.regex(regex, message));
const positiveInt = () => z.coerce.number().check(z.int(), z.positive());
const nonNegativeInt = () => z.coerce.number().check(z.int(), z.minimum(0));
/** Digits only, read as an integer of at most `max`. */
const wholeNumber = (max: number, message?: string) =>
  z.pipe(z.pipe(pattern(/^\d+$/, message), z.transform(Number)), z.number().check(z.int(), z.maximum(max)));
const evmAddress = () => pattern(EVM_ADDRESS, 'must be a 0x-prefixed 20-byte address');
const bytes32Hex = () => pattern(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex');
const TOKEN_SETTING = /* @__PURE__ */ new RegExp(`^[A-Za-z0-9]{1,11}:${EVM_ADDRESS_SOURCE}:\\d{1,2}$`);
const optionalUrl = () => z.optional(z.url());
const optionalString = () => z.optional(z.string());

/** An empty variable (`X=` in an env file) reads as unset. */
const optionalText = () =>
  z.pipe(
    z.optional(z.string()),
    z.transform((v) => v?.trim() || undefined),
  );

/*
 * The settings, in groups; SETTING_GROUPS lists the groups in this order, which is the order of every
 * list of names lib/settings.ts derives. A section follows the last group it reads.
 */
const CORE_SETTINGS = {
  STAGE: { schema: () => z.enum(['local', 'test', 'aws']), default: 'aws', setByStack: 'always "aws" in the stack' },
  LOG_LEVEL: { schema: () => z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']), default: 'INFO' },
  AWS_REGION: { schema: () => z.string(), default: 'us-east-1', setByStack: 'set by Lambda itself' },

  TABLE_NAME: { schema: () => z.string().check(z.minLength(1)), default: 'agent-platform', setByStack: "the stack's table" },
  DYNAMODB_ENDPOINT: { schema: optionalUrl, localOnly: true },
  /*
   * Time budget of every DynamoDB call. The defaults keep the worst case (2 × 2.5 s plus
   * backoff) far inside an API function's 29 s, so a stalled table answers 503 BACKEND_UNAVAILABLE
   * instead of holding the request.
   */
  DYNAMODB_CONNECT_TIMEOUT_MS: { schema: positiveInt, default: 1000, description: 'How long connecting to DynamoDB may take.' },
  DYNAMODB_REQUEST_TIMEOUT_MS: { schema: positiveInt, default: 2500, description: 'How long each attempt of a DynamoDB call may take.' },
  DYNAMODB_MAX_ATTEMPTS: { schema: positiveInt, default: 2, description: 'How many attempts a DynamoDB call makes.' },
  HEALTH_PROBE_CACHE_MS: { schema: nonNegativeInt, default: 5000, description: 'How long `GET /api/health` reuses its last database probe.' },
  /*
   * Also capped by the function's own remaining time, and outside calls (model, chain, card, email)
   * end a margin before it so they answer with their code.
   */
  REQUEST_DEADLINE_MS: {
    schema: positiveInt,
    default: 28_000,
    description: 'How long one API request may take, authentication and rate limiting included: past it the answer is 504 DEADLINE_EXCEEDED.',
  },
  SQS_ENDPOINT: { schema: optionalUrl, localOnly: true },
  PROVISIONING_QUEUE_URL: { schema: optionalString, setByStack: "the stack's provisioning queue" },
  EVENTS_QUEUE_URL: { schema: optionalString, setByStack: "the stack's events queue" },

  JWT_SECRET: { schema: optionalString, secret: true, setByStack: 'generated in Secrets Manager by the stack' },
  JWT_ISSUER: { schema: () => z.string(), default: 'agent-platform' },
  JWT_AUDIENCE: { schema: () => z.string(), default: 'agent-platform-api' },
  APP_URL: { schema: () => z.url(), default: 'http://127.0.0.1:3000', setByStack: 'use the context key appUrl' },
  COOKIE_SECURE: { schema: flag, default: true },
  ADMIN_EMAILS: { schema: csv, setByStack: 'use the context key adminEmails' },
  TESTER_EMAILS: { schema: csv, setByStack: 'use the context key testerEmails' },
} as const satisfies SettingGroup;

const KMS_SETTINGS = {
  KMS_KEY_ID: { schema: optionalString, setByStack: "the stack's KMS key" },
} as const satisfies SettingGroup;

const ECS_SETTINGS = {
  ECS_CLUSTER_ARN: { schema: optionalString, setByStack: "the stack's cluster" },
  ECS_TASK_DEFINITION_ARN: { schema: optionalString, setByStack: "the stack's task definition" },
  ECS_SUBNET_IDS: { schema: csv, setByStack: "the stack's public subnets" },
  ECS_SECURITY_GROUP_IDS: { schema: csv, setByStack: "the stack's runtime security group" },
} as const satisfies SettingGroup;

const RUNTIME_SETTINGS = {
  RUNTIME_IMAGE: {
    schema: () => z.string(),
    default: 'agent-platform/runtime:local',
    setByStack: 'the task image: runtime/Dockerfile built as an image asset, or the context key runtimeImage',
    description: "In AWS, the task definition's image (runtime/Dockerfile's asset unless the operator overrides it); a label locally.",
  },
  AGENT_DOMAIN: { schema: () => z.string(), default: 'agents.localhost', setByStack: 'use the context key agentDomain' },
  LOCAL_EDGE_PORT: {
    schema: () => z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(65535))),
    localOnly: true,
    description:
      "The local stack's own port, where its edge serves the agents' subdomains over plain http: agent URLs then read http://<subdomain>.<AGENT_DOMAIN>:<port> (npm start sets it).",
  },
} as const satisfies SettingGroup;

/** The agent edge (edge/): the one process in front of every instance. */
const EDGE_SETTINGS = {
  EDGE_PORT: {
    schema: () => z.coerce.number().check(z.int(), z.minimum(0), z.maximum(65535)),
    default: 8080,
    setByStack: "the edge service's container port",
    description: 'The port the standalone edge process (edge/main.ts) listens on; 0 = any free port.',
  },
} as const satisfies SettingGroup;

const REQUEST_LIMIT_SETTINGS = {
  MAX_BODY_BYTES: { schema: positiveInt, default: 1_048_576 },
  RATE_LIMITS: { schema: optionalString, description: 'JSON overrides of DEFAULT_RATE_LIMITS, e.g. {"register":{"limit":5}}.' },
} as const satisfies SettingGroup;

/** Wallets (spec 4.9). */
const DATA_SETTINGS = {
  DATA_DIR: { schema: () => z.string(), default: '.data', localOnly: true, description: "Folder of the local stack's data; the local master key lives in it." },
  LOCAL_MASTER_KEY_FILE: {
    schema: optionalString,
    localOnly: true,
    description: 'Master key that wraps wallet data keys where there is no KMS (local stack, tests); 32 bytes, created 0600 when absent.',
  },
} as const satisfies SettingGroup;

/** Wallet key custody: KMS in AWS, a local master key file elsewhere. */
export const keyCustodyConfig = /* @__PURE__ */ configSection([KMS_SETTINGS, DATA_SETTINGS], (e, core) => ({
  kmsKeyId: e.KMS_KEY_ID,
  /** Tests get a master key in the temp folder, never in the developer's data folder. */
  localMasterKeyFile: dataPath(core, e.DATA_DIR, e.LOCAL_MASTER_KEY_FILE, 'agent-platform-test-master.key', 'master.key'),
}));

const WALLET_SETTINGS = {
  WALLET_RPC_URL: { schema: optionalUrl, description: 'Chain RPC the wallet balance is read from; unset → balance "unavailable".' },
  WALLET_NETWORK: {
    schema: () => z.enum(['l2-test', 'l2-main']),
    default: 'l2-test',
    description: 'Network name reported with wallets (the chain WALLET_RPC_URL serves).',
  },
  WALLET_RPC_TIMEOUT_MS: { schema: positiveInt, default: 3000, description: 'Upper bound of one balance read, so a down RPC never holds a request.' },
} as const satisfies SettingGroup;

export const walletConfig = /* @__PURE__ */ configSection([WALLET_SETTINGS], (e) => ({
  rpcUrl: e.WALLET_RPC_URL,
  network: e.WALLET_NETWORK,
  rpcTimeoutMs: e.WALLET_RPC_TIMEOUT_MS,
}));

const HOSTED_WALLET_SETTINGS = {
  HOSTED_WALLET_PROVIDER: {
    schema: () => z.optional(z.enum(['local'])),
    description: 'Hosted-wallet provider behind /api/wallet/create; unset = not configured. `local` = keys generated here, envelope-encrypted.',
  },
  HOSTED_WALLET_PROJECT_ID: {
    schema: () => z.optional(z.string().check(z.minLength(1))),
    description: 'Project id the hosted wallet reports; defaults to the provider name.',
  },
} as const satisfies SettingGroup;

export const hostedWalletConfig = /* @__PURE__ */ configSection([HOSTED_WALLET_SETTINGS], (e) => ({
  provider: e.HOSTED_WALLET_PROVIDER,
  projectId: e.HOSTED_WALLET_PROJECT_ID ?? e.HOSTED_WALLET_PROVIDER,
}));

/** Hosting-platform MCP gateway (spec 4.13). */
const INFRA_MCP_SETTINGS = {
  INFRA_MCP_DOCS_URL: {
    schema: () => z.url({ protocol: /^https$/ }),
    default: 'https://docs.infra-platform.example/mcp-server',
    description: 'Where `/api/infra-mcp/docs` redirects.',
  },
  INFRA_MCP_REPO_URL: {
    schema: () => z.url({ protocol: /^https$/ }),
    default: 'https://code.infra-platform.example/infra-platform/mcp-server',
    description: 'Where `/api/infra-mcp/github` redirects.',
  },
  INFRA_MCP_DOCKER_IMAGE: {
    schema: () => z.string().check(z.minLength(1)),
    default: 'ghcr.io/infra-platform/mcp-server:latest',
    description: 'The image the MCP gateway names.',
  },
} as const satisfies SettingGroup;

export const infraMcpConfig = /* @__PURE__ */ configSection([INFRA_MCP_SETTINGS], (e) => ({
  docsUrl: e.INFRA_MCP_DOCS_URL,
  repoUrl: e.INFRA_MCP_REPO_URL,
  dockerImage: e.INFRA_MCP_DOCKER_IMAGE,
}));

/** Accounts. */
const REFERRAL_SETTINGS = {
  REFERRAL_CREDITS: { schema: nonNegativeInt, default: 100, description: 'Credits granted to both users when a sign-up names a valid referral code.' },
  REFERRAL_CAP: {
    schema: nonNegativeInt,
    default: 20,
    description: 'Referrals credited per referrer at most: past it a referral still links the accounts but pays nothing.',
  },
} as const satisfies SettingGroup;

export const referralConfig = /* @__PURE__ */ configSection([REFERRAL_SETTINGS], (e) => ({ credits: e.REFERRAL_CREDITS, cap: e.REFERRAL_CAP }));

const EMAIL_SETTINGS = {
  OUTBOX_DIR: {
    schema: optionalString,
    localOnly: true,
    description: 'Where the local stack and tests write each outgoing email as a JSON file; default $DATA_DIR/outbox.',
  },
  EMAIL_FROM: {
    schema: () => z.string().check(z.minLength(3)),
    default: 'no-reply@localhost',
    description: 'Sender of account email (password reset); must be an SES-verified identity in AWS.',
  },
} as const satisfies SettingGroup;

const BOT_CHECK_SETTINGS = {
  BOT_CHECK_VERIFY_URL: {
    schema: optionalUrl,
    description: 'Challenge-token siteverify URL (Turnstile/reCAPTCHA wire format); unset = bot detection off (local default).',
  },
  BOT_CHECK_SECRET: { schema: optionalString, secret: true, description: 'Secret sent to the siteverify URL with each token.' },
} as const satisfies SettingGroup;

export const botCheckConfig = /* @__PURE__ */ configSection([BOT_CHECK_SETTINGS], (e) => ({ verifyUrl: e.BOT_CHECK_VERIFY_URL, secret: e.BOT_CHECK_SECRET }));

const SIGN_IN_TIMING_SETTINGS = {
  FORGOT_PASSWORD_MIN_MS: {
    schema: nonNegativeInt,
    default: 300,
    description: 'Forgot-password answers take at least this long, known email or not, so timing reveals nothing.',
  },
  SIGN_IN_CAPPED_DELAY_MS: {
    schema: () => z.coerce.number().check(z.int(), z.minimum(0), z.maximum(30000)),
    default: 3000,
    description: "Sign-in from an unfamiliar address while the account's failure cap is reached waits this long when bot detection is off.",
  },
} as const satisfies SettingGroup;

export const signInTimingConfig = /* @__PURE__ */ configSection([SIGN_IN_TIMING_SETTINGS], (e) => ({
  forgotPasswordMinMs: e.FORGOT_PASSWORD_MIN_MS,
  signInCappedDelayMs: e.SIGN_IN_CAPPED_DELAY_MS,
}));

/** Standard Webhooks' retry schedule (as Svix runs it): after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** Webhook receivers (spec 6). */
const WEBHOOK_SETTINGS = {
  WEBHOOK_ENDPOINTS: {
    schema: () => listOf(z.url({ protocol: /^https?$/ })),
    description: 'Comma-separated URLs; every event is POSTed to each. Unset = no delivery.',
  },
  WEBHOOK_SECRET: {
    schema: () => z.optional(pattern(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'must be whsec_ followed by base64')),
    secret: true,
    description: 'Standard Webhooks signing secret, `whsec_` + base64 of the key.',
  },
  /* Tests shorten it. */
  WEBHOOK_RETRY_SCHEDULE_MS: {
    schema: () => emptyAsUnset(z.pipe(commaList(), z.array(wholeNumber(7 * 24 * 3600_000, 'milliseconds')).check(z.maxLength(30)))),
    default: DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
    description: 'Waits before each retry of a failed webhook delivery, in ms, comma-separated; in AWS the schedule must cover at least 24 hours.',
  },
  WEBHOOK_DISABLE_AFTER_MS: {
    schema: positiveInt,
    default: 259_200_000,
    description:
      'An account endpoint whose deliveries failed without a success for this long is disabled and its owner mailed (3 days; at least a day in AWS).',
  },
} as const satisfies SettingGroup;

/** A shortened schedule or disable window is for tests and the local stack: in AWS it would drop events after a short outage. */
export const webhooksConfig = /* @__PURE__ */ configSection([WEBHOOK_SETTINGS], (e, core) => {
  const DAY_MS = 24 * 3600_000;
  if (core.inAws) {
    const total = e.WEBHOOK_RETRY_SCHEDULE_MS.reduce((sum, ms) => sum + ms, 0);
    if (total < DAY_MS) {
      throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE_MS must cover at least 24 hours in AWS (it covers ${Math.round(total / 60_000)} minutes)`);
    }
    if (e.WEBHOOK_DISABLE_AFTER_MS < DAY_MS) throw new ConfigError('WEBHOOK_DISABLE_AFTER_MS must be at least a day (86400000) in AWS');
  }
  return {
    endpoints: e.WEBHOOK_ENDPOINTS,
    secret: e.WEBHOOK_SECRET,
    retryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE_MS,
    disableAfterMs: e.WEBHOOK_DISABLE_AFTER_MS,
  };
});

/**
 * Card payments (spec 2.16, 4.14) through the processor's official SDK. Unset secret key or price
 * → the checkout routes answer 503 CARD_NOT_CONFIGURED; unset webhook secret → the webhook does.
 */
const CARD_SETTINGS = {
  CARD_SECRET_KEY: { schema: optionalText, secret: true },
  CARD_WEBHOOK_SECRET: {
    schema: optionalText,
    secret: true,
    description: 'Signing secret of the card webhook endpoint (`whsec_...`); the raw body is verified with it.',
  },
  CARD_WEBHOOK_TOLERANCE_SECONDS: {
    schema: positiveInt,
    default: 300,
    description: "Largest accepted age of a webhook signature, in seconds (the SDK's default is 300).",
  },
  CARD_API_HOST: { schema: optionalText, localOnly: true, description: 'API host of the processor: only for a fake server on loopback (tests, demos).' },
  CARD_API_PORT: {
    schema: () => z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(65535))),
    localOnly: true,
    description: 'API port of the processor: only for a fake server on loopback (tests, demos).',
  },
  CARD_API_PROTOCOL: {
    schema: () => z.optional(z.enum(['http', 'https'])),
    localOnly: true,
    description: 'API protocol of the processor: only for a fake server on loopback (tests, demos).',
  },
  CARD_TIMEOUT_MS: {
    schema: positiveInt,
    default: 10_000,
    description: 'Upper bound of one processor API call, so a slow processor never holds a request to the Lambda limit.',
  },
  CARD_PRICES: {
    schema: optionalText,
    description: 'Recurring price id of each plan as one JSON map {"solo":"price_..."}; a CARD_PRICE_<PLAN> variable wins.',
  },
  CARD_PRICE_LABEL: { schema: optionalText, description: 'Recurring price id of the label plan.' },
  CARD_PRICE_SOLO: { schema: optionalText, description: 'Recurring price id of the solo plan.' },
  CARD_PRICE_COLLECTIVE: { schema: optionalText, description: 'Recurring price id of the collective plan.' },
  CARD_PRICE_NETWORK: { schema: optionalText, description: 'Recurring price id of the network plan.' },
  CARD_CREDIT_PRICES: {
    schema: optionalText,
    description: 'Credit packs on sale, JSON {"price_...": credits}: the only price ids /api/card/credits accepts.',
  },
  CARD_STORAGE_PRICE: {
    schema: optionalText,
    description: 'One-off price id of 1 GB of extra agent storage (the checkout quantity is the GB bought).',
  },
  CARD_MODE: {
    schema: () => z.optional(z.enum(['processor', 'local'])),
    localOnly: true,
    description:
      '`local` replaces the processor with a checkout page served by the local server, which completes the session and posts a signed webhook; refused in AWS. Unset: `local` in the local stack (npm start), `processor` elsewhere.',
  },
} as const satisfies SettingGroup;

const cardPlanPrices = () => z.partialRecord(z.enum(PLAN_NAMES), z.string().check(z.minLength(1)));
const cardCreditPrices = () => z.record(pattern(/^[A-Za-z0-9_-]{1,128}$/), z.number().check(z.int(), z.positive()));

/** Card settings; the return pages of a checkout are on the application's origin. */
export const cardConfig = /* @__PURE__ */ configSection([CARD_SETTINGS], (e, core) => {
  if (e.CARD_MODE === 'local' && core.inAws) throw new ConfigError('CARD_MODE=local is for the local stack only: it takes no payment, so it is refused in AWS');
  // A fresh `npm start` subscribes with no setting; tests and AWS keep the real processor unless told.
  const mode = e.CARD_MODE ?? (core.stage === 'local' && !core.inAws ? 'local' : 'processor');
  const fromMap = jsonSetting('CARD_PRICES', e.CARD_PRICES, cardPlanPrices) ?? {};
  const single = { label: e.CARD_PRICE_LABEL, solo: e.CARD_PRICE_SOLO, collective: e.CARD_PRICE_COLLECTIVE, network: e.CARD_PRICE_NETWORK };
  const planPrices: Partial<Record<keyof typeof single, string>> = { ...fromMap };
  for (const [plan, price] of Object.entries(single) as [keyof typeof single, string | undefined][]) if (price) planPrices[plan] = price;
  const billingPage = new URL('/settings/billing', core.appUrl);
  return {
    mode,
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

/**
 * OAuth sign-in. Each provider is off until its client id AND secret are set (start and
 * callback answer 503 OAUTH_NOT_CONFIGURED). The URLs default to the real providers' endpoints;
 * tests point them at a fake provider on loopback.
 */
const OAUTH_SETTINGS = {
  OAUTH_CODEHOST_CLIENT_ID: { schema: optionalText },
  OAUTH_CODEHOST_CLIENT_SECRET: { schema: optionalText, secret: true },
  OAUTH_CODEHOST_AUTHORIZE_URL: { schema: () => z.url(), default: 'https://github.com/login/oauth/authorize' },
  OAUTH_CODEHOST_TOKEN_URL: { schema: () => z.url(), default: 'https://github.com/login/oauth/access_token' },
  OAUTH_CODEHOST_USERINFO_URL: {
    schema: () => z.url(),
    default: 'https://api.github.com/user',
    description: 'The user record (numeric `id`, `login`, `name`).',
  },
  OAUTH_CODEHOST_EMAILS_URL: {
    schema: () => z.url(),
    default: 'https://api.github.com/user/emails',
    description: 'The email list, whose verified primary address links accounts.',
  },
  OAUTH_WEBID_CLIENT_ID: { schema: optionalText },
  OAUTH_WEBID_CLIENT_SECRET: { schema: optionalText, secret: true },
  OAUTH_WEBID_ISSUER: {
    schema: () => z.url(),
    default: 'https://accounts.google.com',
    description: 'OpenID Connect issuer: the `iss` an ID token from the token endpoint must carry.',
  },
  OAUTH_WEBID_AUTHORIZE_URL: { schema: () => z.url(), default: 'https://accounts.google.com/o/oauth2/v2/auth' },
  OAUTH_WEBID_TOKEN_URL: { schema: () => z.url(), default: 'https://oauth2.googleapis.com/token' },
  OAUTH_WEBID_USERINFO_URL: { schema: () => z.url(), default: 'https://openidconnect.googleapis.com/v1/userinfo' },
  OAUTH_TIMEOUT_MS: {
    schema: positiveInt,
    default: 5000,
    description: 'Upper bound of one call to a provider (token exchange, user info), so a slow provider never holds a request.',
  },
} as const satisfies SettingGroup;

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

/** Wallet sign-in (SIWE). Unset RPC → plain EOA signatures still verify locally; smart-wallet signatures answer 503 CHAIN_UNAVAILABLE. */
const CHAIN_SETTINGS = {
  CHAIN_RPC_URL: {
    schema: optionalUrl,
    description: 'JSON-RPC of the L2 main network (chain 8453) used to verify smart-wallet signatures (ERC-1271 / ERC-6492).',
  },
  CHAIN_RPC_TIMEOUT_MS: {
    schema: positiveInt,
    default: 3000,
    description: 'Upper bound of one smart-wallet verification call; past it the sign-in answers 503.',
  },
} as const satisfies SettingGroup;

export const chainConfig = /* @__PURE__ */ configSection([CHAIN_SETTINGS], (e) => ({ rpcUrl: e.CHAIN_RPC_URL, rpcTimeoutMs: e.CHAIN_RPC_TIMEOUT_MS }));

/**
 * Decentralised-social identity (spec 4.2): `fidToken` is a JWT verified against this JWKS, with
 * this issuer and audience. Unset JWKS URL or issuer → POST /api/auth/social/verify answers 503
 * SOCIAL_NOT_CONFIGURED.
 */
const SOCIAL_SETTINGS = {
  SOCIAL_JWKS_URL: { schema: optionalUrl },
  SOCIAL_ISSUER: { schema: optionalText },
  SOCIAL_AUDIENCE: { schema: optionalText, description: 'Defaults to the host of APP_URL.' },
} as const satisfies SettingGroup;

export const socialConfig = /* @__PURE__ */ configSection([SOCIAL_SETTINGS], (e, core) => ({
  jwksUrl: e.SOCIAL_JWKS_URL,
  issuer: e.SOCIAL_ISSUER,
  audience: e.SOCIAL_AUDIENCE ?? new URL(core.appUrl).host,
}));

/** Token gating (spec 4.2). */
const GATING_SETTINGS = {
  GATING_TOKEN_ADDRESS: {
    schema: () => z.optional(pattern(EVM_ADDRESS)),
    description: 'ERC-20 contract on the L2 main network whose balance gates access; unset → gating is off (everyone has access, `tokenGated: false`).',
  },
  GATING_MIN_BALANCE: { schema: () => pattern(/^\d+$/), default: '1', description: "Minimum balance, an integer in the token's smallest unit." },
  GATING_TOKEN_SYMBOL: { schema: () => z.string().check(z.minLength(1), z.maxLength(32)), default: 'TOKEN', description: 'Symbol reported as `token`.' },
  GATING_RPC_URL: {
    schema: optionalUrl,
    description:
      'JSON-RPC the balance is read from (may carry a provider key); default CHAIN_RPC_URL, then in AWS the public endpoint. Locally no public host is called by default: gated reads answer 503 CHAIN_UNAVAILABLE until one of them is set.',
  },
  GATING_PUBLIC_RPC_URL: {
    schema: () => z.url(),
    default: 'https://mainnet.base.org',
    description: 'The credential-free RPC URL reported as `rpcEndpoint` (never GATING_RPC_URL, which may hold a key).',
  },
} as const satisfies SettingGroup;

export const gatingConfig = /* @__PURE__ */ configSection([GATING_SETTINGS, CHAIN_SETTINGS], (e, core) => ({
  tokenAddress: e.GATING_TOKEN_ADDRESS,
  minBalance: e.GATING_MIN_BALANCE,
  tokenSymbol: e.GATING_TOKEN_SYMBOL,
  // The local stack and tests call no outside host unless told to (the README's outside-call settings).
  rpcUrl: e.GATING_RPC_URL ?? e.CHAIN_RPC_URL ?? (core.inAws ? e.GATING_PUBLIC_RPC_URL : undefined),
  publicRpcUrl: e.GATING_PUBLIC_RPC_URL,
}));

/** Agents, instances and provisioning. */
const MODEL_SETTINGS = {
  MODEL_API_BASE_URL: {
    schema: optionalUrl,
    description: "OpenAI-compatible model endpoint of the platform's model layer (e.g. https://api.openai.com/v1); unset → chat answers MODEL_NOT_CONFIGURED.",
  },
  MODEL_API_KEY: { schema: optionalText, secret: true, description: 'Bearer key sent to MODEL_API_BASE_URL; never handed to agent runtimes.' },
  MODEL_API_TIMEOUT_MS: { schema: positiveInt, default: 60_000, description: 'Upper bound of one model call.' },
  MODEL_FIRST_TOKEN_TIMEOUT_MS: {
    schema: positiveInt,
    default: 15_000,
    description: "How long one model of a fallback chain may take to stream its answer's first token before the call moves to the next model.",
  },
  MODEL_RESPONSE_TIMEOUT_MS: {
    schema: positiveInt,
    default: 30_000,
    description:
      'How long one model of a fallback chain may take to answer a call that is not streamed (the first step of a tool loop) before the call moves to the next model; below MODEL_API_TIMEOUT_MS, so a fallback has time to answer.',
  },
  MODEL_BREAKER_FAILURES: {
    schema: positiveInt,
    default: 5,
    description: "Retryable failures of one provider's model within MODEL_BREAKER_WINDOW_SECONDS that open its circuit breaker.",
  },
  MODEL_BREAKER_WINDOW_SECONDS: { schema: positiveInt, default: 60, description: 'The window over which a model breaker counts failures.' },
  MODEL_BREAKER_COOLDOWN_SECONDS: {
    schema: positiveInt,
    default: 30,
    description: 'How long an open model breaker sends every call to the fallback before one call probes the primary again.',
  },
} as const satisfies SettingGroup;

/** Agents, instances and provisioning. */
export const modelConfig = /* @__PURE__ */ configSection([MODEL_SETTINGS], (e) => ({
  baseUrl: e.MODEL_API_BASE_URL,
  apiKey: e.MODEL_API_KEY,
  timeoutMs: e.MODEL_API_TIMEOUT_MS,
  firstTokenTimeoutMs: e.MODEL_FIRST_TOKEN_TIMEOUT_MS,
  responseTimeoutMs: e.MODEL_RESPONSE_TIMEOUT_MS,
  breaker: {
    failures: e.MODEL_BREAKER_FAILURES,
    windowSeconds: e.MODEL_BREAKER_WINDOW_SECONDS,
    coolDownSeconds: e.MODEL_BREAKER_COOLDOWN_SECONDS,
  },
}));

/**
 * AI model layer. Direct providers: a key enables the vendor's own API for its catalogue
 * models (direct wins over the MODEL_API_BASE_URL aggregator); the base URLs are for proxies and fakes.
 */
const AI_SETTINGS = {
  OPENAI_API_KEY: { schema: optionalText, secret: true },
  OPENAI_BASE_URL: { schema: optionalUrl },
  ANTHROPIC_API_KEY: { schema: optionalText, secret: true },
  ANTHROPIC_BASE_URL: { schema: optionalUrl },
  GOOGLE_API_KEY: { schema: optionalText, secret: true },
  GOOGLE_BASE_URL: { schema: optionalUrl },
  AI_CATALOGUE: { schema: optionalText, description: 'The model catalogue as JSON (same shape as domain/models/catalogue.ts); unset → the versioned file.' },
} as const satisfies SettingGroup;

/** AI model layer: direct providers and the operator's catalogue (parsed by domain/models/catalogue.ts). */
export const aiConfig = /* @__PURE__ */ configSection([AI_SETTINGS], (e) => ({
  openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL },
  anthropic: { apiKey: e.ANTHROPIC_API_KEY, baseUrl: e.ANTHROPIC_BASE_URL },
  google: { apiKey: e.GOOGLE_API_KEY, baseUrl: e.GOOGLE_BASE_URL },
  catalogueJson: e.AI_CATALOGUE,
}));

/**
 * A model with no provider key, on the local stack only: an OpenAI-compatible model server found on
 * loopback at start (Ollama, llama.cpp's server), else the built-in local model, which answers
 * deterministically and is not a language model. Refused in AWS.
 */
const LOCAL_MODEL_SETTINGS = {
  LOCAL_MODEL: {
    schema: () => z.optional(z.enum(['auto', 'builtin', 'off'])),
    localOnly: true,
    description:
      'The keyless model of the local stack: `auto` (the default locally) uses a model server found on loopback at start, else the built-in local model; `builtin` the built-in one without looking; `off` none (chat answers MODEL_NOT_CONFIGURED until a provider is set). Refused in AWS.',
  },
  LOCAL_MODEL_URL: {
    schema: optionalUrl,
    localOnly: true,
    description:
      'Base URL of the OpenAI-compatible model server the local stack looks for at start instead of LOCAL_MODEL_PROBE_URLS (e.g. http://127.0.0.1:1234/v1).',
  },
  LOCAL_MODEL_PROBE_URLS: {
    schema: () => emptyAsUnset(listOf(z.url())),
    default: ['http://127.0.0.1:11434/v1', 'http://127.0.0.1:8080/v1'],
    localOnly: true,
    description: "Comma-separated base URLs the local stack asks for `GET <url>/models` at start, in order; default Ollama's and llama.cpp server's.",
  },
  LOCAL_MODEL_SERVER_MODELS: {
    schema: () => emptyAsUnset(commaList()),
    localOnly: true,
    description: "The model ids LOCAL_MODEL_URL serves: set by the local start from the server's listing (set with LOCAL_MODEL_URL, the start lists nothing).",
  },
} as const satisfies SettingGroup;

/** The local stack's keyless models: the model server found at start, and whether the built-in model answers. */
export const localModelConfig = /* @__PURE__ */ configSection([LOCAL_MODEL_SETTINGS], (e, core) => {
  const named = e.LOCAL_MODEL !== undefined && e.LOCAL_MODEL !== 'off';
  if (core.inAws && (named || e.LOCAL_MODEL_URL || e.LOCAL_MODEL_SERVER_MODELS))
    throw new ConfigError('LOCAL_MODEL and LOCAL_MODEL_URL are for the local stack only: the built-in model is no language model, so AWS refuses it');
  const mode = core.inAws ? 'off' : (e.LOCAL_MODEL ?? (core.stage === 'local' ? 'auto' : 'off'));
  const serverModels = mode === 'auto' && e.LOCAL_MODEL_URL ? (e.LOCAL_MODEL_SERVER_MODELS ?? []) : [];
  return {
    mode,
    /** Where the start looks for a model server: the one named, else the probe list; nowhere unless `auto`. */
    probeUrls: mode !== 'auto' ? [] : e.LOCAL_MODEL_URL ? [e.LOCAL_MODEL_URL] : e.LOCAL_MODEL_PROBE_URLS,
    /** The server's listing is known (set, or found at start): nothing to look for. */
    listed: e.LOCAL_MODEL_SERVER_MODELS !== undefined,
    server: serverModels.length ? { baseUrl: e.LOCAL_MODEL_URL!, models: serverModels } : undefined,
    builtin: mode === 'builtin' || (mode === 'auto' && !serverModels.length),
  };
});

const PROVISIONING_SETTINGS = {
  PROVISIONING_DLQ_URL: {
    schema: optionalString,
    setByStack: 'in AWS the DLQ feeds the provisioner-dlq function directly',
    description: "Dead-letter queue of the provisioning queue: the local stack polls it into the provisioner's DLQ handler.",
  },
  LAUNCHER: {
    schema: () => z.optional(z.enum(['ecs', 'local'])),
    localOnly: true,
    description: 'How instances are launched: `ecs` (Fargate RunTask) or `local` (child processes running runtime/). Default: ecs in AWS, local elsewhere.',
  },
  RUNTIME_VERSION: {
    schema: () => pattern(/^[0-9A-Za-z][0-9A-Za-z._+-]{0,63}$/),
    default: '1.0.0',
    description: 'Runtime version label of new and updated instances (reported by `runtimeVersion`).',
  },
  APPROVED_RUNTIME_IMAGES: { schema: csv, description: 'Comma-separated container images an update may move to, besides RUNTIME_IMAGE.' },
  PROVISION_HEALTH_ATTEMPTS: {
    schema: positiveInt,
    default: 60,
    description: 'Health probes of a launched instance before it counts as never healthy.',
  },
  PROVISION_HEALTH_INTERVAL_MS: { schema: positiveInt, default: 1000, description: 'The pause between two health probes of a launched instance.' },
  RUNTIME_PLATFORM_URL: {
    schema: optionalUrl,
    description: 'Base URL agent runtimes use to reach the platform API (state, messages, model layer); default APP_URL.',
  },
  LOCAL_RUNTIME_ENTRY: { schema: optionalString, localOnly: true, description: 'Local launcher: the runtime entry file it runs (default runtime/server.ts).' },
} as const satisfies SettingGroup;

/**
 * How clients reach an agent: through the edge, at its account's subdomain. In AWS the edge sits
 * behind HTTPS on 443; the local stack serves it on its own port over plain http.
 */
function agentUrls(agentDomain: string, localEdgePort: number | undefined, inAws: boolean) {
  if (localEdgePort !== undefined && inAws) throw new ConfigError('LOCAL_EDGE_PORT is for the local stack only: in AWS the edge is behind HTTPS on 443');
  const authority = (subdomain: string) => `${subdomain}.${agentDomain}${localEdgePort === undefined ? '' : `:${localEdgePort}`}`;
  const secure = localEdgePort === undefined;
  return {
    http: (subdomain: string) => `${secure ? 'https' : 'http'}://${authority(subdomain)}`,
    websocket: (subdomain: string) => `${secure ? 'wss' : 'ws'}://${authority(subdomain)}`,
  };
}

/** Agents, instances and provisioning: where and how agent runtimes are launched. */
export const instanceConfig = /* @__PURE__ */ configSection([ECS_SETTINGS, RUNTIME_SETTINGS, PROVISIONING_SETTINGS], (e, core) => ({
  ecs: {
    clusterArn: e.ECS_CLUSTER_ARN,
    taskDefinitionArn: e.ECS_TASK_DEFINITION_ARN,
    subnetIds: e.ECS_SUBNET_IDS,
    securityGroupIds: e.ECS_SECURITY_GROUP_IDS,
  },
  runtimeImage: e.RUNTIME_IMAGE,
  agentDomain: e.AGENT_DOMAIN,
  agentUrls: agentUrls(e.AGENT_DOMAIN, e.LOCAL_EDGE_PORT, core.inAws),
  localEdgePort: e.LOCAL_EDGE_PORT,
  provisioningDlqUrl: e.PROVISIONING_DLQ_URL,
  launcher: e.LAUNCHER ?? (core.stage === 'aws' ? 'ecs' : 'local'),
  runtimeVersion: e.RUNTIME_VERSION,
  approvedRuntimeImages: [e.RUNTIME_IMAGE, ...e.APPROVED_RUNTIME_IMAGES],
  provisionHealth: { attempts: e.PROVISION_HEALTH_ATTEMPTS, intervalMs: e.PROVISION_HEALTH_INTERVAL_MS },
  runtimePlatformUrl: e.RUNTIME_PLATFORM_URL ?? core.appUrl,
  localRuntimeEntry: e.LOCAL_RUNTIME_ENTRY,
}));

/** Live streams of channel-provisioned agents. */
const STREAMING_SETTINGS = {
  STREAMING_PROVIDER: { schema: () => z.enum(['local']), default: 'local', description: '`local` generates and stores keys, no outside call.' },
  STREAMING_RTMP_URL: {
    schema: () => pattern(/^rtmps?:\/\//),
    default: 'rtmp://127.0.0.1:1935/live',
    description: 'RTMP ingest server the local streaming adapter reports.',
  },
  STREAMING_PLAYBACK_BASE_URL: { schema: optionalUrl, description: 'HLS playback origin the local streaming adapter reports; default APP_URL/live.' },
} as const satisfies SettingGroup;

export const streamingConfig = /* @__PURE__ */ configSection([STREAMING_SETTINGS], (e, core) => ({
  provider: e.STREAMING_PROVIDER,
  rtmpUrl: e.STREAMING_RTMP_URL,
  playbackBaseUrl: e.STREAMING_PLAYBACK_BASE_URL ?? new URL('/live', core.appUrl).href,
}));

/** Heartbeat and metrics. */
const HEARTBEAT_SETTINGS = {
  HEARTBEAT_TICK_MS: {
    schema: positiveInt,
    default: 60_000,
    localOnly: true,
    description: 'Local stack: how often the heartbeat sweep runs (AWS: the EventBridge schedule, every 5 minutes).',
  },
  HEARTBEAT_MAX_USERS_PER_RUN: { schema: positiveInt, default: 1000, description: 'Most due users one sweep claims; the rest stay due for the next run.' },
  HEARTBEAT_CONCURRENCY: {
    schema: positiveInt,
    default: 16,
    description: 'Users checked at once in a sweep (each check waits on an instance with short timeouts).',
  },
} as const satisfies SettingGroup;

/** Heartbeat and metrics. */
export const heartbeatConfig = /* @__PURE__ */ configSection([HEARTBEAT_SETTINGS], (e) => ({
  tickMs: e.HEARTBEAT_TICK_MS,
  maxUsersPerRun: e.HEARTBEAT_MAX_USERS_PER_RUN,
  concurrency: e.HEARTBEAT_CONCURRENCY,
}));

const METRICS_SETTINGS = {
  METRICS_STORAGE_QUOTA_MB: { schema: positiveInt, default: 25_600, description: 'Storage quota GET /api/metrics reports the table size against, in MB.' },
} as const satisfies SettingGroup;

export const metricsConfig = /* @__PURE__ */ configSection([METRICS_SETTINGS], (e) => ({ storageQuotaMb: e.METRICS_STORAGE_QUOTA_MB }));

/** Skills that keep records of their own (bookings, guest lists, files, workspaces...). */
const TREASURY_SETTINGS = {
  TREASURY_TOKENS: {
    schema: () => listOf(pattern(TOKEN_SETTING, 'SYMBOL:0xcontract:decimals')),
    description:
      'treasury: ERC-20 tokens whose balances it reads besides the native coin, `SYMBOL:0xcontract:decimals` comma-separated (read through WALLET_RPC_URL).',
  },
} as const satisfies SettingGroup;

const FILES_SETTINGS = {
  FILE_STORAGE: {
    schema: () => z.enum(['local', 's3']),
    default: 'local',
    setByStack: "always s3 in the stack, with the stack's files bucket",
    description: 'file-manager: where file bytes are kept. `local` = a folder (FILES_DIR); `s3` = the bucket FILES_BUCKET (the stack sets both).',
  },
  FILES_DIR: { schema: optionalString, localOnly: true, description: 'Folder of the local file storage; default $DATA_DIR/files.' },
  FILES_BUCKET: {
    schema: () => z.optional(pattern(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name')),
    setByStack: "the stack's files bucket",
    description: 'The S3 bucket of FILE_STORAGE=s3.',
  },
  FILES_S3_ENDPOINT: {
    schema: optionalUrl,
    localOnly: true,
    description: "Another S3 endpoint (path-style), for an S3-compatible store or a loopback fake in tests; default AWS's.",
  },
  FILE_UPLOAD_URL_TTL_SECONDS: { schema: positiveInt, default: 900, description: 'How long a presigned upload URL of file-manager stays valid.' },
  FILE_DOWNLOAD_URL_TTL_SECONDS: {
    schema: positiveInt,
    default: 3600,
    description: "How long a signed download URL of a stored file (visual-synthesizer's images) stays valid.",
  },
} as const satisfies SettingGroup;

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

/** Skills that move stablecoins. */
const PAYMENT_TOKEN_SETTINGS = {
  PAYMENT_TOKEN: {
    schema: () => z.optional(pattern(TOKEN_SETTING, 'SYMBOL:0xcontract:decimals')),
    description:
      'usdc-payments and instant-split: the stablecoin they send, `SYMBOL:0xcontract:decimals` (through WALLET_RPC_URL); unset = payments not configured.',
  },
} as const satisfies SettingGroup;

/** `SYMBOL:0xcontract:decimals`, as the token settings give it. */
function tokenSetting(value: string) {
  const [symbol, address, decimals] = value.split(':');
  return { symbol: symbol!, address: address as `0x${string}`, decimals: Number(decimals) };
}

/** The stablecoin the treasury, usdc-payments and instant-split skills send. */
export const skillTokensConfig = /* @__PURE__ */ configSection([TREASURY_SETTINGS, PAYMENT_TOKEN_SETTINGS], (e) => ({
  treasuryTokens: e.TREASURY_TOKENS.map(tokenSetting),
  paymentToken: e.PAYMENT_TOKEN ? tokenSetting(e.PAYMENT_TOKEN) : undefined,
}));

/**
 * v1 gateway and machine payments (spec 4.12). MPP is on only with both MPP_RECIPIENT and
 * MPP_RPC_URL; otherwise the 402 says machine payments are unavailable and credentials get MPP_NOT_CONFIGURED.
 */
const GATEWAY_SETTINGS = {
  MPP_CHAIN_ID: { schema: positiveInt, default: 4217 },
  MPP_RPC_URL: { schema: optionalUrl },
  MPP_RECIPIENT: { schema: () => z.optional(evmAddress()) },
  MPP_CURRENCY: {
    schema: evmAddress,
    default: '0x20c0000000000000000000000000000000000000',
    description: 'TIP-20 token the price is paid in (6 decimals); default pathUSD.',
  },
  MPP_CONFIRMATIONS: { schema: positiveInt, default: 1 },
  MPP_CHALLENGE_TTL_SECONDS: { schema: positiveInt, default: 300 },
  MPP_REALM: {
    schema: () => z.optional(pattern(/^[\x21-\x7e]{1,255}$/, 'printable ASCII without spaces (a host name)')),
    description:
      'Protection space of the MPP challenges (`realm`); its fingerprint is part of the memo a payment must carry, so changing it refuses payments for open challenges. Default the host of APP_URL.',
  },
  MPP_RPC_TIMEOUT_MS: {
    schema: positiveInt,
    default: 3000,
    description: 'Upper bound of one chain RPC call while verifying a payment; past it the gateway answers 503.',
  },
  GATEWAY_PRICES: {
    schema: optionalText,
    description: 'JSON plugin → decimal price in the payment token, e.g. {"agent":"0.05"}; unlisted plugins keep DEFAULT_GATEWAY_PRICES.',
  },
  GATEWAY_ALLOWED_ORIGINS: {
    schema: csv,
    description: 'Comma-separated origins browsers may call the gateway from (CORS); default the origin of APP_URL. `*` allows any.',
  },
  /*
   * Unlisted plugins are priced from GATEWAY_PRICES × GATEWAY_CARD_RATE, rounded up to a whole penny
   * and at least the processor's minimum charge.
   */
  GATEWAY_CARD_PRICES: {
    schema: optionalText,
    description: 'One-off card payment of a gateway call: JSON plugin → price in minor units of the card billing currency (GBP pence), e.g. {"agent":120}.',
  },
  GATEWAY_CARD_RATE: {
    schema: () => pattern(/^\d+(\.\d{1,6})?$/, 'a decimal rate with at most 6 decimals'),
    default: '1',
    description: 'Billing-currency units charged per payment-token unit (a decimal, at most 6 decimals); 1 never charges less than the token price.',
  },
} as const satisfies SettingGroup;

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

/** v1 gateway: prices, CORS origins and the MPP chain settings. */
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
      realm: e.MPP_REALM ?? new URL(core.appUrl).host,
      rpcTimeoutMs: e.MPP_RPC_TIMEOUT_MS,
    },
  };
});

/**
 * Agent verification with EAS: the attestation is read from this EAS contract (default the
 * L2 predeploy) through EAS_RPC_URL (default CHAIN_RPC_URL) and must carry EAS_SCHEMA_UID. Unset schema
 * or RPC → `eas` verification answers 503 EAS_NOT_CONFIGURED.
 */
const EAS_SETTINGS = {
  EAS_CONTRACT_ADDRESS: { schema: evmAddress, default: '0x4200000000000000000000000000000000000021' },
  EAS_SCHEMA_UID: { schema: () => z.optional(bytes32Hex()) },
  EAS_RPC_URL: { schema: optionalUrl },
} as const satisfies SettingGroup;

export const easConfig = /* @__PURE__ */ configSection([EAS_SETTINGS, CHAIN_SETTINGS], (e) => ({
  contractAddress: e.EAS_CONTRACT_ADDRESS as `0x${string}`,
  schemaUid: e.EAS_SCHEMA_UID,
  rpcUrl: e.EAS_RPC_URL ?? e.CHAIN_RPC_URL,
}));

/** Channel skills: each messaging app's HTTP API (tests point them at loopback fakes). */
const CHANNEL_SETTINGS = {
  CHANNEL_TELEGRAM_API_URL: { schema: () => z.url(), default: 'https://api.telegram.org' },
  CHANNEL_DISCORD_API_URL: { schema: () => z.url(), default: 'https://discord.com/api/v10' },
  CHANNEL_WHATSAPP_API_URL: { schema: () => z.url(), default: 'https://graph.facebook.com/v21.0' },
  CHANNEL_SLACK_API_URL: { schema: () => z.url(), default: 'https://slack.com/api' },
  CHANNEL_TIMEOUT_MS: { schema: positiveInt, default: 10_000, description: 'Bound on one call to a messaging app.' },
} as const satisfies SettingGroup;

/** Channel skills. */
export const channelsConfig = /* @__PURE__ */ configSection([CHANNEL_SETTINGS], (e) => ({
  telegramUrl: e.CHANNEL_TELEGRAM_API_URL,
  discordUrl: e.CHANNEL_DISCORD_API_URL,
  whatsappUrl: e.CHANNEL_WHATSAPP_API_URL,
  slackUrl: e.CHANNEL_SLACK_API_URL,
  timeoutMs: e.CHANNEL_TIMEOUT_MS,
}));

/**
 * Skills that reach user-supplied URLs (webhook, browser): user-supplied URLs go through the guarded fetch,
 * which refuses loopback.
 */
const FETCH_SETTINGS = {
  FETCH_ALLOWED_LOOPBACK: {
    schema: () => listOf(pattern(/^(127\.0\.0\.1|\[::1\]):\d{1,5}$/, '127.0.0.1:<port> or [::1]:<port>')),
    localOnly: true,
    description: 'The loopback fakes of tests and the local stack the guarded fetch may reach, exactly (`127.0.0.1:8080`, `[::1]:8080`); refused in AWS.',
  },
} as const satisfies SettingGroup;

/** The guarded fetch of user-supplied URLs. */
export const fetchConfig = /* @__PURE__ */ configSection([FETCH_SETTINGS], (e, core) => {
  const allowedLoopback = e.FETCH_ALLOWED_LOOPBACK;
  if (allowedLoopback.length && core.inAws) {
    throw new ConfigError('FETCH_ALLOWED_LOOPBACK is for tests and the local stack only: in AWS it would open the network behind the platform to user URLs');
  }
  return { allowedLoopback };
});

/**
 * `coinbase` agent verification: the wallet must hold Coinbase's "Verified Account" attestation on Base, found
 * through Coinbase's attestation indexer and read from EAS (EAS_CONTRACT_ADDRESS, EAS_RPC_URL). Defaults: Base mainnet
 * (github.com/coinbase/verifications).
 */
const COINBASE_VERIFICATION_SETTINGS = {
  COINBASE_VERIFICATION_INDEXER: { schema: evmAddress, default: '0x2c7eE1E5f416dfF40054c27A62f7B357C4E8619C' },
  COINBASE_VERIFICATION_ATTESTER: { schema: evmAddress, default: '0x357458739F90461b99789350868CD7CF330Dd7EE' },
  COINBASE_VERIFICATION_SCHEMA_UID: { schema: bytes32Hex, default: '0xf8b05c79f090979bf4a80270aba232dff11a10d9ca55c4f88de95317970f0de9' },
} as const satisfies SettingGroup;

export const coinbaseVerificationConfig = /* @__PURE__ */ configSection([COINBASE_VERIFICATION_SETTINGS], (e) => ({
  indexer: e.COINBASE_VERIFICATION_INDEXER as `0x${string}`,
  attester: e.COINBASE_VERIFICATION_ATTESTER as `0x${string}`,
  schemaUid: e.COINBASE_VERIFICATION_SCHEMA_UID as `0x${string}`,
}));

/** `ens` agent verification: the name must resolve to the signing wallet through the ENS Universal Resolver. */
const ENS_SETTINGS = {
  ENS_RPC_URL: { schema: optionalUrl, description: 'JSON-RPC of Ethereum mainnet, where ENS names resolve; unset → 503 ENS_NOT_CONFIGURED.' },
  ENS_UNIVERSAL_RESOLVER: { schema: evmAddress, default: '0xeeeeeeee14d718c2b47d9923deab1335e144eeee' },
} as const satisfies SettingGroup;

export const ensConfig = /* @__PURE__ */ configSection([ENS_SETTINGS], (e) => ({
  rpcUrl: e.ENS_RPC_URL,
  universalResolver: e.ENS_UNIVERSAL_RESOLVER as `0x${string}`,
}));

/**
 * Healing: an instance that exits unexpectedly is relaunched after these pauses, one per
 * consecutive relaunch (the last repeats; at most 900, SQS's longest delay), at most
 * INSTANCE_RELAUNCHES_PER_HOUR times in an hour; past that it is `error` with the exit's reason.
 */
const HEALING_SETTINGS = {
  INSTANCE_RELAUNCHES_PER_HOUR: { schema: positiveInt, default: 5 },
  INSTANCE_RELAUNCH_BACKOFF_SECONDS: {
    schema: () => emptyAsUnset(listOf(wholeNumber(900))),
    default: [1, 5, 30, 120, 300],
    description: 'Pauses before the consecutive relaunches of an instance that exited unexpectedly, in seconds, comma-separated; the last repeats.',
  },
} as const satisfies SettingGroup;

const AWS_FAKE_SETTINGS = {
  ECS_ENDPOINT: {
    schema: optionalUrl,
    localOnly: true,
    description: "Another ECS endpoint than AWS's (a loopback fake in tests); the credentials are the local ones then.",
  },
  KMS_ENDPOINT: {
    schema: optionalUrl,
    localOnly: true,
    description: "Another KMS endpoint than AWS's (a loopback fake in tests); the credentials are the local ones then.",
  },
} as const satisfies SettingGroup;

/** Loopback fakes of ECS and KMS (tests); unset in AWS. */
export const awsFakesConfig = /* @__PURE__ */ configSection([AWS_FAKE_SETTINGS], (e) => {
  const local = { accessKeyId: 'local', secretAccessKey: 'local' };
  return {
    ecs: e.ECS_ENDPOINT ? { endpoint: e.ECS_ENDPOINT, credentials: local } : {},
    kms: e.KMS_ENDPOINT ? { endpoint: e.KMS_ENDPOINT, credentials: local } : {},
  };
});

/** No stranded work. */
const REDRIVE_SETTINGS = {
  PROVISIONING_REDRIVE_AFTER_SECONDS: {
    schema: nonNegativeInt,
    default: 180,
    description: "An agent or launch in `provisioning` this long with no live worker on it is driven again; 0 turns the heartbeat's pass off.",
  },
} as const satisfies SettingGroup;

/** Relaunches after unexpected exits, and the stranded-work reconciler. */
export const healingConfig = /* @__PURE__ */ configSection([HEALING_SETTINGS, REDRIVE_SETTINGS], (e) => ({
  relaunchesPerHour: e.INSTANCE_RELAUNCHES_PER_HOUR,
  backoffSeconds: e.INSTANCE_RELAUNCH_BACKOFF_SECONDS,
  provisioningRedriveAfterMs: e.PROVISIONING_REDRIVE_AFTER_SECONDS * 1000,
}));

/** Per-agent log in AWS. */
const RUNTIME_LOG_SETTINGS = {
  RUNTIME_LOG_GROUP: {
    schema: () => z.optional(z.string().check(z.minLength(1), z.maxLength(512))),
    setByStack: "the runtime task's log group",
    description: 'The CloudWatch Logs group the runtime tasks write to; unset = the lines the local launcher keeps.',
  },
  CLOUDWATCH_LOGS_ENDPOINT: {
    schema: optionalUrl,
    localOnly: true,
    description: "Another CloudWatch Logs endpoint, for a loopback fake in tests; default AWS's.",
  },
} as const satisfies SettingGroup;

/** Where the per-agent log reads runtime output in AWS. */
export const runtimeLogsConfig = /* @__PURE__ */ configSection([RUNTIME_LOG_SETTINGS], (e) => ({
  group: e.RUNTIME_LOG_GROUP,
  endpoint: e.CLOUDWATCH_LOGS_ENDPOINT,
}));

const SES_SETTINGS = {
  SES_ENDPOINT: {
    schema: optionalUrl,
    localOnly: true,
    description: "Email through SES v2 at this endpoint outside AWS (a loopback fake in tests); refused in AWS, where SES is AWS's own.",
  },
} as const satisfies SettingGroup;

/** Tests write their mail to the temp folder, never into the developer's data folder. */
export const emailConfig = /* @__PURE__ */ configSection([EMAIL_SETTINGS, SES_SETTINGS, DATA_SETTINGS], (e, core) => {
  if (e.SES_ENDPOINT && core.inAws) throw new ConfigError('SES_ENDPOINT is for tests and the local stack only: in AWS email goes to SES itself');
  return {
    from: e.EMAIL_FROM,
    sesEndpoint: e.SES_ENDPOINT,
    outboxDir: dataPath(core, e.DATA_DIR, e.OUTBOX_DIR, 'agent-platform-test-outbox', 'outbox'),
    /** The local stack shows its outbox on a page (local/mail-page.ts); in AWS, tests and through SES there is none to show. */
    outboxPage: core.stage === 'local' && !core.inAws && !e.SES_ENDPOINT,
  };
});

/** Wake on demand. */
const WAKE_SETTINGS = {
  WAKE_WAIT_SECONDS: {
    schema: () => z.coerce.number().check(z.int(), z.minimum(0), z.maximum(25)),
    default: 20,
    description: "How long a message to an idle-stopped agent waits for its wake before 202 (under API Gateway's 29 s, the model's time left over).",
  },
} as const satisfies SettingGroup;

/** The bounded wait of a message that wakes an idle-stopped instance. */
export const wakeConfig = /* @__PURE__ */ configSection([WAKE_SETTINGS], (e) => ({ waitMs: e.WAKE_WAIT_SECONDS * 1000 }));

/** The standalone edge process: its port, and the domain whose subdomains it serves. */
export const edgeConfig = /* @__PURE__ */ configSection([EDGE_SETTINGS, RUNTIME_SETTINGS], (e) => ({ port: e.EDGE_PORT, agentDomain: e.AGENT_DOMAIN }));

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
   * Failed sign-ins (only failures count). `signInAddress`: per account and client address; past it that
   * address gets 429 for the account. `signInAccount`: per account across all addresses; past it an address the owner has not
   * signed in from must pass the bot check (or waits SIGN_IN_CAPPED_DELAY_MS when bot detection is off), never a refusal.
   */
  signInAddress: { limit: 5, windowSeconds: 900, by: 'user' },
  signInAccount: { limit: 20, windowSeconds: 900, by: 'user' },
  /** Reset emails per address (subject `account:<email>`); past it the answer stays the same and no email is sent, so nobody can flood an inbox. */
  forgotPasswordAccount: { limit: 3, windowSeconds: 3600, by: 'user' },
  /** Email verification: link attempts per address, and resends per account (each one is an email). */
  verifyEmail: { limit: 30, windowSeconds: 600, by: 'ip' },
  verifyEmailResend: { limit: 5, windowSeconds: 3600, by: 'user' },
  /** Removing what acts for the account without a sign-in (webhooks, schedules, channels, prompts): a recovery needs it once or twice. */
  standingSetupRemoval: { limit: 10, windowSeconds: 3600, by: 'user' },
  /** The OpenAI-compatible API (`/v1/models`, `/v1/chat/completions`) per account. */
  modelApi: { limit: 120, windowSeconds: 60, by: 'user' },
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

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** The parsed value of a setting: a declared default stands for an unset variable. */
type ValueOf<S> = S extends { readonly schema: () => infer T extends z.core.$ZodType }
  ? S extends { readonly default: unknown }
    ? Exclude<z.output<T>, undefined>
    : z.output<T>
  : never;
/** The parsed values of the settings of `Groups`, by name. */
type ValuesOf<Groups extends readonly SettingGroup[], All = UnionToIntersection<Groups[number]>> = {
  readonly [K in keyof All]: ValueOf<All[K]>;
};

/** The schema of a setting, its default applied to an unset variable (and to one its schema reads as unset). */
function schemaOf(setting: Setting): z.core.$ZodType {
  return 'default' in setting ? z._default(setting.schema(), setting.default as never) : setting.schema();
}

/** The problems of one variable, `NAME: message` each; none when it parses. */
function settingProblems(name: string, setting: Setting, env: NodeJS.ProcessEnv): { problems: string[]; value?: unknown } {
  const result = z.safeParse(schemaOf(setting), env[name]);
  if (result.success) return { problems: [], value: result.data };
  return { problems: result.error.issues.map((issue) => `${[name, ...issue.path].join('.')}: ${issue.message}`) };
}

/** The settings of `groups` in `env`, each variable parsed on the first read of its property, once. */
function lazySettings<Groups extends readonly SettingGroup[]>(env: NodeJS.ProcessEnv, groups: Groups): ValuesOf<Groups> {
  const settings = {};
  for (const group of groups) {
    for (const [name, setting] of Object.entries(group)) {
      Object.defineProperty(settings, name, {
        configurable: true,
        enumerable: true,
        get() {
          const { problems, value } = settingProblems(name, setting, env);
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
function configSection<Groups extends readonly SettingGroup[], T>(groups: Groups, build: (e: ValuesOf<Groups>, core: Config) => T) {
  let built: { generation: number; value: T } | undefined;
  const read = (): T => {
    if (built?.generation !== generation) built = { generation, value: build(lazySettings(process.env, groups), config()) };
    return built.value;
  };
  /** For validateAllSettings: the section over `env`, kept nowhere. */
  const buildFrom = (env: NodeJS.ProcessEnv, core: Config) => build(lazySettings(env, groups), core);
  return Object.assign(read, { buildFrom, groups });
}

/** Tests keep their files in the temp folder, never in the developer's data folder. */
function dataPath(core: Config, dataDir: string, explicit: string | undefined, testName: string, name: string) {
  return explicit ?? (core.stage === 'test' ? join(tmpdir(), testName) : join(dataDir, name));
}

/** The groups of the core. */
export const CORE_GROUPS = [CORE_SETTINGS, REQUEST_LIMIT_SETTINGS] as const;

/**
 * The core: what the request path of every function reads (pipeline, authentication, DynamoDB and
 * SQS clients, rate limiter, events). The scalars parse on their first read.
 */
function buildCore(env: NodeJS.ProcessEnv) {
  const e = lazySettings(env, CORE_GROUPS);
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

/**
 * Every group of settings, by name, in the order of the file: what lib/settings.ts reads to know every setting, the
 * secrets and who sets each in AWS, and what validateAllSettings parses. No function reads it (it names every setting).
 */
export const SETTING_GROUPS = {
  core: CORE_SETTINGS,
  kms: KMS_SETTINGS,
  ecs: ECS_SETTINGS,
  runtime: RUNTIME_SETTINGS,
  requestLimits: REQUEST_LIMIT_SETTINGS,
  data: DATA_SETTINGS,
  wallet: WALLET_SETTINGS,
  hostedWallet: HOSTED_WALLET_SETTINGS,
  infraMcp: INFRA_MCP_SETTINGS,
  referral: REFERRAL_SETTINGS,
  email: EMAIL_SETTINGS,
  botCheck: BOT_CHECK_SETTINGS,
  signInTiming: SIGN_IN_TIMING_SETTINGS,
  webhooks: WEBHOOK_SETTINGS,
  card: CARD_SETTINGS,
  oauth: OAUTH_SETTINGS,
  chain: CHAIN_SETTINGS,
  social: SOCIAL_SETTINGS,
  gating: GATING_SETTINGS,
  model: MODEL_SETTINGS,
  ai: AI_SETTINGS,
  localModel: LOCAL_MODEL_SETTINGS,
  provisioning: PROVISIONING_SETTINGS,
  streaming: STREAMING_SETTINGS,
  heartbeat: HEARTBEAT_SETTINGS,
  metrics: METRICS_SETTINGS,
  treasury: TREASURY_SETTINGS,
  files: FILES_SETTINGS,
  paymentToken: PAYMENT_TOKEN_SETTINGS,
  gateway: GATEWAY_SETTINGS,
  eas: EAS_SETTINGS,
  channels: CHANNEL_SETTINGS,
  fetch: FETCH_SETTINGS,
  coinbaseVerification: COINBASE_VERIFICATION_SETTINGS,
  ens: ENS_SETTINGS,
  healing: HEALING_SETTINGS,
  awsFakes: AWS_FAKE_SETTINGS,
  redrive: REDRIVE_SETTINGS,
  runtimeLogs: RUNTIME_LOG_SETTINGS,
  ses: SES_SETTINGS,
  wake: WAKE_SETTINGS,
  edge: EDGE_SETTINGS,
};

/** The names of the settings of `G` whose declared default is not a value of their schema. */
type MisdeclaredDefaults<G> = {
  [K in keyof G]: G[K] extends { readonly schema: () => infer S extends z.core.$ZodType; readonly default: infer D }
    ? D extends Readonly<z.output<S>>
      ? never
      : K
    : never;
}[keyof G];
type Groups = typeof SETTING_GROUPS;
/** Compiles only when every default is a value of its setting's schema; the error names the setting that is not. */
export type DefaultsMatchTheirSchemas<Names extends never = { [G in keyof Groups]: MisdeclaredDefaults<Groups[G]> }[keyof Groups]> = Names;

/** Every section but the core; each names the groups it is built from (`section.groups`). */
export const CONFIG_SECTIONS = [
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
  localModelConfig,
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
  edgeConfig,
];

/**
 * Parses every setting and builds every section, so that any bad one fails now: the local stack at
 * start (a developer sees a bad .env at once) and tests, through `reloadConfig`. No function calls
 * it (it names every section, so a function that did would carry them all).
 */
export function validateAllSettings(env: NodeJS.ProcessEnv = process.env): Config {
  const problems = Object.values(SETTING_GROUPS).flatMap((group) =>
    Object.entries(group).flatMap(([name, setting]: [string, Setting]) => settingProblems(name, setting, env).problems),
  );
  if (problems.length) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  const core = buildCore(env);
  for (const property of Object.keys(core) as (keyof Config)[]) void core[property];
  for (const section of CONFIG_SECTIONS) section.buildFrom(env, core);
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
