import type { Node } from 'constructs';

/**
 * Operator settings of the functions: every variable platform/config.ts reads, who may set it in AWS,
 * and which functions receive it.
 *
 * - Plain settings come from the CDK context object `settings` (NAME → value, in cdk.json);
 *   `-c settings.CARD_PRICE_SOLO=price_...` overrides one of them, `-c settings='{...}'` replaces them all.
 * - Secret settings live in ONE Secrets Manager secret the stack creates (a JSON object, empty at
 *   first). The operator puts the values there and lists the names in the context `secretSettings`;
 *   each becomes a `{{resolve:secretsmanager:...}}` dynamic reference, resolved by CloudFormation at
 *   deploy time, so no value is ever in cdk.json, the template or cdk.out.
 * - A setting reaches only the functions SETTING_ROUTES names for it.
 */

/**
 * The keys of the settings groups (`const *_SETTINGS`) of platform/config.ts, in its order. They are not exported, so this list
 * is kept by hand; test/infra/settings.test.ts reads platform/config.ts and fails when they drift.
 */
export const KNOWN_SETTINGS = [
  'STAGE',
  'LOG_LEVEL',
  'AWS_REGION',
  'TABLE_NAME',
  'DYNAMODB_ENDPOINT',
  'DYNAMODB_CONNECT_TIMEOUT_MS',
  'DYNAMODB_REQUEST_TIMEOUT_MS',
  'DYNAMODB_MAX_ATTEMPTS',
  'HEALTH_PROBE_CACHE_MS',
  'REQUEST_DEADLINE_MS',
  'SQS_ENDPOINT',
  'PROVISIONING_QUEUE_URL',
  'EVENTS_QUEUE_URL',
  'JWT_SECRET',
  'JWT_ISSUER',
  'JWT_AUDIENCE',
  'APP_URL',
  'COOKIE_SECURE',
  'ADMIN_EMAILS',
  'TESTER_EMAILS',
  'KMS_KEY_ID',
  'ECS_CLUSTER_ARN',
  'ECS_TASK_DEFINITION_ARN',
  'ECS_SUBNET_IDS',
  'ECS_SECURITY_GROUP_IDS',
  'RUNTIME_IMAGE',
  'AGENT_DOMAIN',
  'MAX_BODY_BYTES',
  'RATE_LIMITS',
  'DATA_DIR',
  'LOCAL_MASTER_KEY_FILE',
  'WALLET_RPC_URL',
  'WALLET_NETWORK',
  'WALLET_RPC_TIMEOUT_MS',
  'HOSTED_WALLET_PROVIDER',
  'HOSTED_WALLET_PROJECT_ID',
  'INFRA_MCP_DOCS_URL',
  'INFRA_MCP_REPO_URL',
  'INFRA_MCP_DOCKER_IMAGE',
  'REFERRAL_CREDITS',
  'REFERRAL_CAP',
  'OUTBOX_DIR',
  'EMAIL_FROM',
  'BOT_CHECK_VERIFY_URL',
  'BOT_CHECK_SECRET',
  'FORGOT_PASSWORD_MIN_MS',
  'SIGN_IN_CAPPED_DELAY_MS',
  'WEBHOOK_ENDPOINTS',
  'WEBHOOK_SECRET',
  'WEBHOOK_RETRY_SCHEDULE_MS',
  'WEBHOOK_DISABLE_AFTER_MS',
  'CARD_SECRET_KEY',
  'CARD_WEBHOOK_SECRET',
  'CARD_WEBHOOK_TOLERANCE_SECONDS',
  'CARD_API_HOST',
  'CARD_API_PORT',
  'CARD_API_PROTOCOL',
  'CARD_TIMEOUT_MS',
  'CARD_PRICES',
  'CARD_PRICE_LABEL',
  'CARD_PRICE_SOLO',
  'CARD_PRICE_COLLECTIVE',
  'CARD_PRICE_NETWORK',
  'CARD_CREDIT_PRICES',
  'CARD_STORAGE_PRICE',
  'CARD_MODE',
  'OAUTH_CODEHOST_CLIENT_ID',
  'OAUTH_CODEHOST_CLIENT_SECRET',
  'OAUTH_CODEHOST_AUTHORIZE_URL',
  'OAUTH_CODEHOST_TOKEN_URL',
  'OAUTH_CODEHOST_USERINFO_URL',
  'OAUTH_CODEHOST_EMAILS_URL',
  'OAUTH_WEBID_CLIENT_ID',
  'OAUTH_WEBID_CLIENT_SECRET',
  'OAUTH_WEBID_ISSUER',
  'OAUTH_WEBID_AUTHORIZE_URL',
  'OAUTH_WEBID_TOKEN_URL',
  'OAUTH_WEBID_USERINFO_URL',
  'OAUTH_TIMEOUT_MS',
  'CHAIN_RPC_URL',
  'CHAIN_RPC_TIMEOUT_MS',
  'SOCIAL_JWKS_URL',
  'SOCIAL_ISSUER',
  'SOCIAL_AUDIENCE',
  'GATING_TOKEN_ADDRESS',
  'GATING_MIN_BALANCE',
  'GATING_TOKEN_SYMBOL',
  'GATING_RPC_URL',
  'GATING_PUBLIC_RPC_URL',
  'MODEL_API_BASE_URL',
  'MODEL_API_KEY',
  'MODEL_API_TIMEOUT_MS',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'GOOGLE_API_KEY',
  'GOOGLE_BASE_URL',
  'AI_CATALOGUE',
  'PROVISIONING_DLQ_URL',
  'LAUNCHER',
  'RUNTIME_VERSION',
  'APPROVED_RUNTIME_IMAGES',
  'PROVISION_HEALTH_ATTEMPTS',
  'PROVISION_HEALTH_INTERVAL_MS',
  'RUNTIME_PLATFORM_URL',
  'LOCAL_RUNTIME_ENTRY',
  'STREAMING_PROVIDER',
  'STREAMING_RTMP_URL',
  'STREAMING_PLAYBACK_BASE_URL',
  'HEARTBEAT_TICK_MS',
  'HEARTBEAT_MAX_USERS_PER_RUN',
  'HEARTBEAT_CONCURRENCY',
  'METRICS_STORAGE_QUOTA_MB',
  // skills of issue 12 part B
  'TREASURY_TOKENS',
  'FILE_STORAGE',
  'FILES_DIR',
  'FILES_BUCKET',
  'FILES_S3_ENDPOINT',
  'FILE_UPLOAD_URL_TTL_SECONDS',
  'FILE_DOWNLOAD_URL_TTL_SECONDS',
  // skills of issue 13 part A
  'PAYMENT_TOKEN',
  'MPP_CHAIN_ID',
  'MPP_RPC_URL',
  'MPP_RECIPIENT',
  'MPP_CURRENCY',
  'MPP_CONFIRMATIONS',
  'MPP_CHALLENGE_TTL_SECONDS',
  'MPP_RPC_TIMEOUT_MS',
  'GATEWAY_PRICES',
  'GATEWAY_ALLOWED_ORIGINS',
  'GATEWAY_CARD_PRICES',
  'GATEWAY_CARD_RATE',
  'EAS_CONTRACT_ADDRESS',
  'EAS_SCHEMA_UID',
  'EAS_RPC_URL',
  // channel skills of issue 13 part C
  'CHANNEL_TELEGRAM_API_URL',
  'CHANNEL_DISCORD_API_URL',
  'CHANNEL_WHATSAPP_API_URL',
  'CHANNEL_SLACK_API_URL',
  'CHANNEL_TIMEOUT_MS',
  // skills of issue 13 part B
  'FETCH_ALLOWED_LOOPBACK',
  'COINBASE_VERIFICATION_INDEXER',
  'COINBASE_VERIFICATION_ATTESTER',
  'COINBASE_VERIFICATION_SCHEMA_UID',
  'ENS_RPC_URL',
  'ENS_UNIVERSAL_RESOLVER',
  // issue 20: instances that heal, no stranded provisioning
  'INSTANCE_RELAUNCHES_PER_HOUR',
  'INSTANCE_RELAUNCH_BACKOFF_SECONDS',
  'ECS_ENDPOINT',
  'KMS_ENDPOINT',
  'PROVISIONING_REDRIVE_AFTER_SECONDS',
  // per-agent log in AWS (issue 18)
  'RUNTIME_LOG_GROUP',
  'CLOUDWATCH_LOGS_ENDPOINT',
  // issue 20: the SES call bounded under a hung endpoint (tests)
  'SES_ENDPOINT',
  // issue 22: wake on demand
  'WAKE_WAIT_SECONDS',
] as const;

/** Set by the stack from its own resources or its top-level context keys; `settings` may not override them. */
export const STACK_SETTINGS: Readonly<Record<string, string>> = {
  STAGE: 'always "aws" in the stack',
  AWS_REGION: 'set by Lambda itself',
  TABLE_NAME: "the stack's table",
  PROVISIONING_QUEUE_URL: "the stack's provisioning queue",
  EVENTS_QUEUE_URL: "the stack's events queue",
  PROVISIONING_DLQ_URL: 'in AWS the DLQ feeds the provisioner-dlq function directly',
  JWT_SECRET: 'generated in Secrets Manager by the stack',
  KMS_KEY_ID: "the stack's KMS key",
  ECS_CLUSTER_ARN: "the stack's cluster",
  ECS_TASK_DEFINITION_ARN: "the stack's task definition",
  ECS_SUBNET_IDS: "the stack's public subnets",
  ECS_SECURITY_GROUP_IDS: "the stack's runtime security group",
  APP_URL: 'use the context key appUrl',
  ADMIN_EMAILS: 'use the context key adminEmails',
  TESTER_EMAILS: 'use the context key testerEmails',
  RUNTIME_IMAGE: 'the task image: runtime/Dockerfile built as an image asset, or the context key runtimeImage',
  AGENT_DOMAIN: 'use the context key agentDomain',
  FILE_STORAGE: "always s3 in the stack, with the stack's files bucket",
  FILES_BUCKET: "the stack's files bucket",
  RUNTIME_LOG_GROUP: "the runtime task's log group",
};

/** Meaningful only in the local stack and the tests (emulators, files, child processes, fake servers). */
export const LOCAL_ONLY_SETTINGS: readonly string[] = [
  'DYNAMODB_ENDPOINT',
  'SQS_ENDPOINT',
  'DATA_DIR',
  'LOCAL_MASTER_KEY_FILE',
  'OUTBOX_DIR',
  'LAUNCHER',
  'LOCAL_RUNTIME_ENTRY',
  'CARD_API_HOST',
  'CARD_API_PORT',
  'CARD_API_PROTOCOL',
  'HEARTBEAT_TICK_MS',
  'FILES_DIR',
  'CARD_MODE',
  'FILES_S3_ENDPOINT',
  'FETCH_ALLOWED_LOOPBACK',
  'ECS_ENDPOINT',
  'KMS_ENDPOINT',
  'CLOUDWATCH_LOGS_ENDPOINT',
  'SES_ENDPOINT',
];

/**
 * Credentials: accepted only through the operator secret, never as a plain context value. Any other
 * setting may also go there when its value carries a key (an RPC URL with a provider key in its path).
 */
export const SECRET_SETTINGS: readonly string[] = [
  'CARD_SECRET_KEY',
  'CARD_WEBHOOK_SECRET',
  'OAUTH_CODEHOST_CLIENT_SECRET',
  'OAUTH_WEBID_CLIENT_SECRET',
  'WEBHOOK_SECRET',
  'BOT_CHECK_SECRET',
  'MODEL_API_KEY',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'GOOGLE_API_KEY',
];

/**
 * Functions that reach the model layer (domain/ai); skills: the visual-synthesizer's image generation;
 * runtime-model: the agent runtime's chat completions.
 */
const AI_FUNCTIONS = ['ai', 'agent-chat', 'runtime-model', 'gateway', 'skills'] as const;

/** Every function, or every function behind the HTTP API (the request pipeline's settings). */
export type RouteTarget = readonly string[] | 'all' | 'http';

/**
 * THE routing table: setting name, or prefix ending in `_`, → the functions whose code reads it
 * (found by following each function's imports to its `config()` and section accessor reads). An exact name wins over a
 * prefix, a longer prefix over a shorter one.
 */
export const SETTING_ROUTES: Readonly<Record<string, RouteTarget>> = {
  LOG_LEVEL: 'all',
  // data/client.ts: every function talks to the table
  DYNAMODB_CONNECT_TIMEOUT_MS: 'all',
  DYNAMODB_REQUEST_TIMEOUT_MS: 'all',
  DYNAMODB_MAX_ATTEMPTS: 'all',
  HEALTH_PROBE_CACHE_MS: ['platform'],
  // http/pipeline.ts: the deadline of every API request
  REQUEST_DEADLINE_MS: 'http',
  // http/pipeline.ts, domain/auth (sessions, CSRF, cookies)
  JWT_ISSUER: 'http',
  JWT_AUDIENCE: 'http',
  COOKIE_SECURE: 'http',
  MAX_BODY_BYTES: 'http',
  RATE_LIMITS: 'http',
  // accounts: sign-up, password reset, bot check; OAuth and wallet sign-in are their own functions (issue 16)
  OAUTH_: ['oauth-sign-in'],
  BOT_CHECK_: ['accounts'],
  EMAIL_FROM: ['accounts', 'settings', 'provisioner', 'webhook-delivery'],
  REFERRAL_CREDITS: ['accounts'],
  REFERRAL_CAP: ['accounts'],
  FORGOT_PASSWORD_MIN_MS: ['accounts'],
  SIGN_IN_CAPPED_DELAY_MS: ['accounts'],
  // SIWE smart-wallet checks (wallet-sign-in), the token-gating RPC fallback (social) and agent verification
  CHAIN_RPC_: ['wallet-sign-in', 'social', 'agent-verification'],
  // agent verification reads EAS attestations (EAS_RPC_URL defaults to CHAIN_RPC_URL)
  EAS_: ['agent-verification'],
  // agent verification: Coinbase Verifications (EAS on Base) and ENS names
  COINBASE_VERIFICATION_: ['agent-verification'],
  ENS_: ['agent-verification'],
  SOCIAL_: ['social'],
  GATING_: ['social'],
  // the deletion worker (provisioner) cancels the card subscription of a deleted account; billing's
  // card actions and the card group call the processor
  CARD_: ['billing', 'card', 'provisioner'],
  WALLET_: ['wallet'],
  HOSTED_WALLET_: ['wallet'],
  INFRA_MCP_: ['infra-mcp'],
  WEBHOOK_: ['webhook-delivery'],
  // domain/ai (the model layer): the AI routes, agent chat, the runtime's chat and the gateway's plugins
  MODEL_API_: AI_FUNCTIONS,
  OPENAI_: AI_FUNCTIONS,
  ANTHROPIC_: AI_FUNCTIONS,
  GOOGLE_: AI_FUNCTIONS,
  // plan access reads the catalogue wherever entitlements are checked
  AI_CATALOGUE: 'http',
  STREAMING_: ['provision', 'skills'],
  RUNTIME_VERSION: ['agents', 'instance', 'provisioner'],
  APPROVED_RUNTIME_IMAGES: ['instance'],
  PROVISION_HEALTH_: ['provisioner'],
  RUNTIME_PLATFORM_URL: ['provisioner'],
  HEARTBEAT_: ['heartbeat'],
  METRICS_: ['metrics'],
  // skills of issue 12 part B: treasury reads balances through the wallet RPC; file-manager's storage
  WALLET_RPC_URL: ['wallet', 'skills'],
  WALLET_RPC_TIMEOUT_MS: ['wallet', 'skills'],
  TREASURY_TOKENS: ['skills'],
  FILE_UPLOAD_URL_TTL_SECONDS: ['skills'],
  FILE_DOWNLOAD_URL_TTL_SECONDS: ['skills'],
  // skills of issue 13 part A: usdc-payments and instant-split send this token
  PAYMENT_TOKEN: ['skills'],
  // v1 gateway (issue 11): machine payments, prices and CORS origins
  MPP_: ['gateway'],
  GATEWAY_: ['gateway'],
  // the one-off card checkout of a gateway call (card) is priced from the gateway's prices
  GATEWAY_PRICES: ['gateway', 'card'],
  GATEWAY_CARD_: ['gateway', 'card'],
  // channel skills (issue 13 part C): the skills send and receive, the heartbeat delivers due posts
  CHANNEL_: ['skills', 'heartbeat'],
  // issue 20: the task-state events relaunch a task that stopped; the heartbeat re-drives stranded provisioning
  INSTANCE_RELAUNCH_: ['task-events'],
  INSTANCE_RELAUNCHES_PER_HOUR: ['task-events'],
  PROVISIONING_REDRIVE_AFTER_SECONDS: ['heartbeat'],
  // issue 22: chats, channel messages and scheduled runs wait this long for an idle-stopped instance to wake
  WAKE_WAIT_SECONDS: ['agent-chat', 'skills', 'heartbeat'],
};

/** The routing entry of a setting: its own, else its longest matching prefix. */
export function routeOf(name: string): RouteTarget | undefined {
  if (SETTING_ROUTES[name]) return SETTING_ROUTES[name];
  const prefix = Object.keys(SETTING_ROUTES)
    .filter((k) => k.endsWith('_') && name.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
  return prefix ? SETTING_ROUTES[prefix] : undefined;
}

/** What an operator may set in `settings` or `secretSettings`. */
export const OPERATOR_SETTINGS: readonly string[] = KNOWN_SETTINGS.filter((n) => !(n in STACK_SETTINGS) && !LOCAL_ONLY_SETTINGS.includes(n));

export interface OperatorSettings {
  /** NAME → value, from the context object `settings`. */
  plain: Record<string, string>;
  /** Names whose values are in the operator secret (context `secretSettings`). */
  secret: string[];
  /**
   * Context `secretsRevision`. CloudFormation resolves a dynamic reference only when the resource
   * that holds it changes, so a new value in the secret reaches the functions once this is bumped.
   */
  revision: string;
}

const known = new Set<string>(KNOWN_SETTINGS);

function refuse(name: string, where: string): string | undefined {
  if (!known.has(name)) return `unknown setting ${name} in ${where}; known settings: ${OPERATOR_SETTINGS.join(', ')}`;
  if (name in STACK_SETTINGS) return `${name} in ${where} is set by the stack (${STACK_SETTINGS[name]})`;
  if (LOCAL_ONLY_SETTINGS.includes(name)) return `${name} in ${where} only applies to the local stack and tests`;
  if (!routeOf(name)) return `${name} in ${where} reaches no function: add it to SETTING_ROUTES in lib/settings.ts`;
  return undefined;
}

/** Context values given with `-c` arrive as strings; cdk.json gives JSON. */
function jsonContext(node: Node, key: string): unknown {
  const value: unknown = node.tryGetContext(key);
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (!text) return undefined;
  if (!/^[[{]/.test(text)) return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`CDK context "${key}" is not valid JSON`);
  }
}

export function readOperatorSettings(node: Node): OperatorSettings {
  const errors: string[] = [];
  const rawPlain = jsonContext(node, 'settings') ?? {};
  if (typeof rawPlain !== 'object' || Array.isArray(rawPlain) || rawPlain === null) {
    throw new Error('CDK context "settings" must be an object of NAME → value');
  }
  // `-c settings.NAME=value` overrides one setting without restating the whole object.
  const overrides = Object.entries(node.getAllContext() as Record<string, unknown>)
    .filter(([key]) => key.startsWith('settings.'))
    .map(([key, value]) => [key.slice('settings.'.length), value] as const);
  const plain: Record<string, string> = {};
  for (const [name, value] of [...Object.entries(rawPlain), ...overrides]) {
    const why = refuse(name, 'settings');
    if (why) errors.push(why);
    else if (SECRET_SETTINGS.includes(name)) {
      errors.push(`${name} is a credential: put it in the operator secret (output OperatorSecretArn) and list it in secretSettings, never in settings`);
    } else if (value === null || value === '') continue;
    else if (['string', 'number', 'boolean'].includes(typeof value)) plain[name] = String(value);
    else errors.push(`settings.${name} must be a string, number or boolean`);
  }

  const rawSecret = jsonContext(node, 'secretSettings') ?? [];
  const secretNames = typeof rawSecret === 'string' ? rawSecret.split(',') : rawSecret;
  if (!Array.isArray(secretNames) || !secretNames.every((n) => typeof n === 'string')) {
    throw new Error('CDK context "secretSettings" must be a list of setting names');
  }
  const secret = [...new Set(secretNames.map((n) => n.trim()).filter(Boolean))];
  for (const name of secret) {
    const why = refuse(name, 'secretSettings');
    if (why) errors.push(why);
    else if (name in plain) errors.push(`${name} is both in settings and in secretSettings`);
  }

  const revision: unknown = node.tryGetContext('secretsRevision') ?? '';
  if (!['string', 'number'].includes(typeof revision)) errors.push('CDK context "secretsRevision" must be a string or number');

  if (errors.length) throw new Error(`invalid operator settings:\n- ${errors.join('\n- ')}`);
  return { plain, secret, revision: String(revision) };
}

export interface FunctionIdentity {
  name: string;
  http: boolean;
}

const reaches = (target: RouteTarget, fn: FunctionIdentity) => target === 'all' || (target === 'http' ? fn.http : target.includes(fn.name));

/** A setting's receivers among the functions; throws for a name the table does not route. */
export function receiversOf(name: string, functions: readonly FunctionIdentity[]): string[] {
  const target = routeOf(name);
  if (!target) throw new Error(`setting ${name} has no entry in SETTING_ROUTES`);
  return functions.filter((fn) => reaches(target, fn)).map((fn) => fn.name);
}

/** Every function the routing table names must exist: a typo would silently drop a setting. */
export function checkRoutes(functions: readonly FunctionIdentity[]) {
  const names = new Set(functions.map((f) => f.name));
  for (const [key, target] of Object.entries(SETTING_ROUTES)) {
    if (typeof target === 'string') continue;
    for (const fn of target) if (!names.has(fn)) throw new Error(`SETTING_ROUTES.${key} names an unknown function: ${fn}`);
  }
}

/**
 * The operator settings one function receives: plain values as they are, secret ones as dynamic
 * references built by `secretReference`, and the stack's defaults for routed settings left unset.
 */
export function settingsEnvironment(
  fn: FunctionIdentity,
  operator: OperatorSettings,
  secretReference: (name: string) => string,
  defaults: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...defaults, ...operator.plain })) {
    if (operator.secret.includes(name)) continue;
    if (reaches(routeOf(name) ?? [], fn)) env[name] = value;
  }
  let holdsSecret = false;
  for (const name of operator.secret) {
    if (!reaches(routeOf(name) ?? [], fn)) continue;
    env[name] = secretReference(name);
    holdsSecret = true;
  }
  if (holdsSecret && operator.revision) env.SECRETS_REVISION = operator.revision;
  return env;
}
