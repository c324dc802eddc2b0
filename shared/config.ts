import * as z from 'zod';

/**
 * The only reader of process.env. Parsed once per cold start (or after `reloadConfig` in tests and
 * the local stack), so a bad setting fails loudly at start instead of in the middle of a request.
 */

const csv = z
  .string()
  .optional()
  .transform((s) => (s ?? '').split(',').map((x) => x.trim().toLowerCase()).filter(Boolean));

const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', ''])
    .optional()
    .transform((v) => (v === undefined || v === '' ? fallback : v === 'true' || v === '1'));

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const EnvSchema = z.object({
  STAGE: z.enum(['local', 'test', 'aws']).default('aws'),
  LOG_LEVEL: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']).default('INFO'),
  AWS_REGION: z.string().default('us-east-1'),

  TABLE_NAME: z.string().min(1).default('agent-platform'),
  DYNAMODB_ENDPOINT: z.url().optional(),
  SQS_ENDPOINT: z.url().optional(),
  PROVISIONING_QUEUE_URL: z.string().optional(),
  EVENTS_QUEUE_URL: z.string().optional(),

  JWT_SECRET: z.string().optional(),
  JWT_ISSUER: z.string().default('agent-platform'),
  JWT_AUDIENCE: z.string().default('agent-platform-api'),
  APP_URL: z.url().default('http://127.0.0.1:3000'),
  COOKIE_SECURE: bool(true),
  ADMIN_EMAILS: csv,
  TESTER_EMAILS: csv,

  KMS_KEY_ID: z.string().optional(),
  ECS_CLUSTER_ARN: z.string().optional(),
  ECS_TASK_DEFINITION_ARN: z.string().optional(),
  ECS_SUBNET_IDS: csv,
  ECS_SECURITY_GROUP_IDS: csv,
  RUNTIME_IMAGE: z.string().default('ghcr.io/openclaw/openclaw:latest'),
  AGENT_DOMAIN: z.string().default('agents.localhost'),

  MAX_BODY_BYTES: positiveInt(1024 * 1024),
  RATE_LIMITS: z.string().optional(),
});

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
};

const RateLimitOverrides = z.record(
  z.string(),
  z.strictObject({
    limit: z.number().int().positive().optional(),
    windowSeconds: z.number().int().positive().optional(),
    by: z.enum(['user', 'ip']).optional(),
  }),
);

export const MIN_JWT_SECRET_BYTES = 32;

export class ConfigError extends Error {}

function parse(env: NodeJS.ProcessEnv) {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${detail}`);
  }
  const e = parsed.data;
  if (e.JWT_SECRET !== undefined && Buffer.byteLength(e.JWT_SECRET) < MIN_JWT_SECRET_BYTES) {
    throw new ConfigError(`JWT_SECRET must be at least ${MIN_JWT_SECRET_BYTES} bytes`);
  }
  let overrides: z.infer<typeof RateLimitOverrides> = {};
  if (e.RATE_LIMITS) {
    let raw: unknown;
    try {
      raw = JSON.parse(e.RATE_LIMITS);
    } catch {
      throw new ConfigError('RATE_LIMITS must be JSON');
    }
    const o = RateLimitOverrides.safeParse(raw);
    if (!o.success) throw new ConfigError(`RATE_LIMITS: ${o.error.issues[0]?.message}`);
    overrides = o.data;
  }
  const rateLimits: Record<string, RateLimitRule> = {};
  for (const [scope, rule] of Object.entries(DEFAULT_RATE_LIMITS)) rateLimits[scope] = { ...rule, ...overrides[scope] };

  return {
    stage: e.STAGE,
    logLevel: e.LOG_LEVEL,
    region: e.AWS_REGION,
    tableName: e.TABLE_NAME,
    dynamoEndpoint: e.DYNAMODB_ENDPOINT,
    sqsEndpoint: e.SQS_ENDPOINT,
    provisioningQueueUrl: e.PROVISIONING_QUEUE_URL,
    eventsQueueUrl: e.EVENTS_QUEUE_URL,
    jwt: { secret: e.JWT_SECRET, issuer: e.JWT_ISSUER, audience: e.JWT_AUDIENCE },
    appUrl: e.APP_URL,
    cookieSecure: e.COOKIE_SECURE,
    adminEmails: e.ADMIN_EMAILS,
    testerEmails: e.TESTER_EMAILS,
    kmsKeyId: e.KMS_KEY_ID,
    ecs: {
      clusterArn: e.ECS_CLUSTER_ARN,
      taskDefinitionArn: e.ECS_TASK_DEFINITION_ARN,
      subnetIds: e.ECS_SUBNET_IDS,
      securityGroupIds: e.ECS_SECURITY_GROUP_IDS,
    },
    runtimeImage: e.RUNTIME_IMAGE,
    agentDomain: e.AGENT_DOMAIN,
    maxBodyBytes: e.MAX_BODY_BYTES,
    rateLimits,
    /** Emulators take any credentials; in AWS the SDK's default chain is used. */
    localCredentials: e.DYNAMODB_ENDPOINT || e.SQS_ENDPOINT ? { accessKeyId: 'local', secretAccessKey: 'local' } : undefined,
  };
}

export type Config = ReturnType<typeof parse>;

let cached: Config | undefined;

export function config(): Config {
  cached ??= parse(process.env);
  return cached;
}

/** For the local stack and tests, which set the environment after this module loads. */
export function reloadConfig(overrides: Record<string, string | undefined> = {}): Config {
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  cached = parse(process.env);
  return cached;
}

/** The local stack's settings that are not the Lambda's (port, data folder). */
export function localSettings(env: NodeJS.ProcessEnv = process.env) {
  return z
    .object({
      PORT: z.coerce.number().int().min(0).max(65535).default(3000),
      HOST: z.string().default('127.0.0.1'),
      DATA_DIR: z.string().default('.data'),
      DYNAMODB_LOCAL_PORT: z.coerce.number().int().min(0).max(65535).default(0),
    })
    .parse(env);
}
