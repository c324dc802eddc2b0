import { describe, expect, it } from 'vitest';
import { platformFunctions } from '#lib/constructs/functions';
import * as configModule from '#platform/config';
import { CONFIG_SECTIONS, CORE_GROUPS, SETTING_GROUPS, type SettingGroup, validateAllSettings } from '#platform/config';
import {
  checkRoutes,
  KNOWN_SETTINGS,
  LOCAL_ONLY_SETTINGS,
  OPERATOR_SETTINGS,
  readOperatorSettings,
  receiversOf,
  routeOf,
  routeTargets,
  SECRET_SETTINGS,
  SETTING_ROUTES,
  STACK_SETTINGS,
} from '#lib/settings';
import { contract } from '#contract';
import { cdkContext, inspect, synth, testApp, type Json } from './synth';

const functions = platformFunctions(contract);
const allNames = functions.map((f) => f.name);
const httpNames = functions.filter((f) => f.http).map((f) => f.name);

describe('the list of settings', () => {
  const sections = Object.values(configModule).filter((value) => typeof value === 'function' && 'buildFrom' in value && 'groups' in value);
  const registered = new Set<SettingGroup>(Object.values(SETTING_GROUPS));

  it('declares each setting in one group only', () => {
    expect(KNOWN_SETTINGS.length).toBeGreaterThan(100);
    expect(KNOWN_SETTINGS.filter((name, i) => KNOWN_SETTINGS.indexOf(name) !== i)).toEqual([]);
  });

  it('validates every settings group and builds every section at start (reloadConfig), none left out', () => {
    expect(sections.length).toBeGreaterThan(25);
    // Each exported section is built by validateAllSettings, and reads only groups lib/settings.ts knows.
    expect(new Set(CONFIG_SECTIONS)).toEqual(new Set(sections));
    for (const section of CONFIG_SECTIONS) for (const group of section.groups) expect(registered.has(group), section.name).toBe(true);
    // Every group is read: by the core or by a section.
    const sectionGroups: SettingGroup[] = CONFIG_SECTIONS.flatMap((section): readonly SettingGroup[] => section.groups);
    const read = new Set<SettingGroup>([...CORE_GROUPS, ...sectionGroups]);
    for (const [name, group] of Object.entries(SETTING_GROUPS)) expect(read.has(group), name).toBe(true);
  });

  it('parses a bad value of a section setting at start, naming the variable', () => {
    expect(() => validateAllSettings({ STAGE: 'test', WAKE_WAIT_SECONDS: '26' })).toThrow(/WAKE_WAIT_SECONDS/);
    expect(() => validateAllSettings({ STAGE: 'test', FILE_STORAGE: 's3' })).toThrow(/FILE_STORAGE=s3 needs FILES_BUCKET/);
  });

  it('places every setting in exactly one class: set by the stack, local only, or routed to functions', () => {
    for (const group of Object.values(SETTING_GROUPS) as SettingGroup[]) {
      for (const [name, setting] of Object.entries(group)) expect(setting.setByStack && setting.localOnly, name).toBeFalsy();
    }
    for (const name of KNOWN_SETTINGS) {
      const classes = [name in STACK_SETTINGS, LOCAL_ONLY_SETTINGS.includes(name), OPERATOR_SETTINGS.includes(name)].filter(Boolean);
      expect(classes, name).toHaveLength(1);
      if (OPERATOR_SETTINGS.includes(name)) expect(routeOf(name), `${name} has no route`).toBeDefined();
    }
    for (const name of [...Object.keys(STACK_SETTINGS), ...LOCAL_ONLY_SETTINGS, ...SECRET_SETTINGS]) expect(KNOWN_SETTINGS, name).toContain(name);
  });

  it('uses every route and names only existing functions', () => {
    const groups: Record<string, SettingGroup> = SETTING_GROUPS;
    for (const [key, target] of routeTargets()) {
      const [group, name] = key.split('.') as [string, string | undefined];
      // A group's route reaches at least one of its settings; an exception is an operator setting of the group, going elsewhere.
      const reached = Object.keys(groups[group]!).filter((n) => (name ? n === name : true) && routeOf(n) === target);
      expect(reached.length, key).toBeGreaterThan(0);
      if (name) expect(target, key).not.toEqual((SETTING_ROUTES[group as keyof typeof SETTING_ROUTES] as { to: unknown }).to);
    }
    expect(() => checkRoutes(functions)).not.toThrow();
    expect(() => checkRoutes(functions.filter((f) => f.name !== 'billing'))).toThrow(/SETTING_ROUTES\.card names an unknown function: billing/);
    expect(() => checkRoutes(functions.filter((f) => f.name !== 'instance'))).toThrow(/SETTING_ROUTES\.provisioning\.RUNTIME_VERSION .*instance/);
  });

  it('treats every credential-looking setting as a secret (unless the stack sets it or it is local only)', () => {
    const looksSecret = KNOWN_SETTINGS.filter((n) => /(SECRET|PRIVATE|_KEY)(_|$)|PASSWORD$/.test(n));
    expect(looksSecret.length).toBeGreaterThan(5);
    for (const name of looksSecret) expect(SECRET_SETTINGS.includes(name) || name in STACK_SETTINGS || LOCAL_ONLY_SETTINGS.includes(name), name).toBe(true);
    // The stack's own secret is declared a secret too, and stays out of the operator's.
    expect(STACK_SETTINGS.JWT_SECRET).toBeDefined();
    expect(SETTING_GROUPS.core.JWT_SECRET.secret).toBe(true);
    expect(SECRET_SETTINGS).not.toContain('JWT_SECRET');
  });

  it('sends card, OAuth, model and webhook settings only to the functions that use them', () => {
    // The deletion worker (provisioner) cancels a deleted account's card subscription; billing's card
    // actions and the card group's redirects and webhook call the processor.
    expect(receiversOf('CARD_SECRET_KEY', functions)).toEqual(['billing', 'card', 'provisioner']);
    expect(receiversOf('CARD_PRICE_SOLO', functions)).toEqual(['billing', 'card', 'provisioner']);
    expect(receiversOf('GATEWAY_CARD_RATE', functions)).toEqual(['gateway', 'card']);
    expect(receiversOf('OAUTH_WEBID_CLIENT_SECRET', functions)).toEqual(['oauth-sign-in']);
    expect(receiversOf('BOT_CHECK_SECRET', functions)).toEqual(['accounts']);
    expect(receiversOf('MODEL_API_KEY', functions).sort()).toEqual(['agent-chat', 'ai', 'gateway', 'openai-compatible', 'runtime-model', 'skills']);
    expect(receiversOf('ANTHROPIC_API_KEY', functions).sort()).toEqual(['agent-chat', 'ai', 'gateway', 'openai-compatible', 'runtime-model', 'skills']);
    expect(receiversOf('AI_CATALOGUE', functions)).toEqual(httpNames);
    expect(receiversOf('WEBHOOK_SECRET', functions)).toEqual(['webhook-delivery']);
    expect(receiversOf('HOSTED_WALLET_PROVIDER', functions)).toEqual(['wallet']);
    expect(receiversOf('CHAIN_RPC_URL', functions).sort()).toEqual(['agent-verification', 'social', 'wallet-sign-in']);
    expect(receiversOf('EAS_SCHEMA_UID', functions)).toEqual(['agent-verification']);
    expect(receiversOf('RATE_LIMITS', functions)).toEqual(httpNames);
    expect(receiversOf('LOG_LEVEL', functions)).toEqual(allNames);
  });
});

describe('operator settings at synth', () => {
  const node = (context: Record<string, unknown>) => testApp({ ...cdkContext, ...context }).node;

  it('refuses an unknown name and lists the known ones', () => {
    const attempt = () => readOperatorSettings(node({ settings: { CARD_PRICE_SOLOO: 'price_x' } }));
    expect(attempt).toThrow(/unknown setting CARD_PRICE_SOLOO in settings; known settings: .*CARD_PRICE_SOLO,/);
    expect(() => readOperatorSettings(node({ secretSettings: ['NOPE'] }))).toThrow(/unknown setting NOPE in secretSettings/);
  });

  it('refuses settings the stack sets or that only apply locally', () => {
    expect(() => readOperatorSettings(node({ settings: { TABLE_NAME: 'x' } }))).toThrow(/TABLE_NAME in settings is set by the stack/);
    expect(() => readOperatorSettings(node({ settings: { APP_URL: 'https://x.example' } }))).toThrow(/context key appUrl/);
    expect(() => readOperatorSettings(node({ settings: { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' } }))).toThrow(/local stack/);
    expect(() => readOperatorSettings(node({ secretSettings: ['JWT_SECRET'] }))).toThrow(/set by the stack/);
  });

  it('refuses a credential as a plain context value', () => {
    for (const name of SECRET_SETTINGS) {
      expect(() => readOperatorSettings(node({ settings: { [name]: 'x' } })), name).toThrow(new RegExp(`${name} is a credential`));
    }
  });

  it('refuses a name given both ways, and values that are not scalars', () => {
    expect(() => readOperatorSettings(node({ settings: { CHAIN_RPC_URL: 'https://rpc.example' }, secretSettings: ['CHAIN_RPC_URL'] }))).toThrow(/both/);
    expect(() => readOperatorSettings(node({ settings: { RATE_LIMITS: { register: { limit: 5 } } } }))).toThrow(/RATE_LIMITS must be a string/);
    expect(() => readOperatorSettings(node({ settings: '{not json' }))).toThrow(/settings.*JSON/);
  });

  it('accepts the string forms -c gives: a JSON object and a comma-separated list', () => {
    const read = readOperatorSettings(node({ settings: '{"REFERRAL_CREDITS": 50, "COOKIE_SECURE": true}', secretSettings: 'CARD_SECRET_KEY, MODEL_API_KEY' }));
    expect(read).toEqual({ plain: { REFERRAL_CREDITS: '50', COOKIE_SECURE: 'true' }, secret: ['CARD_SECRET_KEY', 'MODEL_API_KEY'], revision: '' });
  });

  it('lets -c settings.NAME=value override one setting of the cdk.json object', () => {
    const read = readOperatorSettings(node({ 'settings.CARD_PRICE_SOLO': 'price_override', 'settings.EMAIL_FROM': 'ops@example.org' }));
    expect(read.plain).toEqual({ ...(cdkContext.settings as object), CARD_PRICE_SOLO: 'price_override', EMAIL_FROM: 'ops@example.org' });
    expect(() => readOperatorSettings(node({ 'settings.MODEL_API_KEY': 'sk-x' }))).toThrow(/MODEL_API_KEY is a credential/);
  });

  it('needs EMAIL_FROM (or an SES identity ARN) and derives the identities from a display-name address', () => {
    expect(() => synth({ settings: {} })).toThrow(/EMAIL_FROM is required/);
    const t = inspect(synth({ settings: { EMAIL_FROM: 'Agent Platform <mail@notify.example.org>' } }));
    const resources = JSON.stringify(t.statementsWith('accounts', 'ses:SendEmail')[0]!.Resource);
    expect(resources).toMatch(/identity\/mail@notify\.example\.org"/);
    expect(resources).toMatch(/identity\/notify\.example\.org"/);
  });
});

describe('settings in the template', () => {
  const plain = {
    EMAIL_FROM: 'no-reply@example.com',
    CARD_PRICE_SOLO: 'price_solo',
    OAUTH_CODEHOST_CLIENT_ID: 'codehost-client',
    MODEL_API_BASE_URL: 'https://models.example.com/v1',
    LOG_LEVEL: 'WARN',
    RATE_LIMITS: '{"register":{"limit":5}}',
    WEBHOOK_ENDPOINTS: 'https://hooks.example.com/a',
    HEARTBEAT_CONCURRENCY: 8,
    RUNTIME_PLATFORM_URL: 'https://api.example.com/',
  };
  const secret = [
    'CARD_SECRET_KEY',
    'CARD_WEBHOOK_SECRET',
    'OAUTH_WEBID_CLIENT_SECRET',
    'MODEL_API_KEY',
    'WEBHOOK_SECRET',
    'BOT_CHECK_SECRET',
    'CHAIN_RPC_URL',
  ];
  const template = synth({ settings: plain, secretSettings: secret, secretsRevision: '7' });
  const t = inspect(template);
  const operatorSecret = t.logicalIdOf('AWS::SecretsManager::Secret', (p) => /operator credentials/.test(p.Description));

  it('hands each setting to exactly the functions the routing table names', () => {
    for (const name of [...Object.keys(plain), ...secret]) {
      const receivers = receiversOf(name, functions);
      expect(receivers.length, name).toBeGreaterThan(0);
      for (const fn of allNames) expect(name in t.environmentOf(fn), `${name} → ${fn}`).toBe(receivers.includes(fn));
    }
    expect(t.environmentOf('billing').CARD_PRICE_SOLO).toBe('price_solo');
    expect(t.environmentOf('heartbeat').HEARTBEAT_CONCURRENCY).toBe('8');
    expect(t.environmentOf('provisioner').RUNTIME_PLATFORM_URL).toBe('https://api.example.com/');
  });

  it('passes each secret as a dynamic reference to its key of the operator secret, never as a value', () => {
    for (const name of secret) {
      for (const fn of receiversOf(name, functions)) {
        expect(t.environmentOf(fn)[name], `${name} → ${fn}`).toEqual({
          'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: operatorSecret }, `:SecretString:${name}::}}`]],
        });
      }
    }
    // The secret resource itself holds no operator value: CloudFormation creates it as an empty object.
    expect(t.resources[operatorSecret]!.Properties.SecretString).toBe('{}');
    template.hasOutput('OperatorSecretArn', { Value: { Ref: operatorSecret } });
  });

  it('marks the functions that hold secrets with the revision, so a bump re-resolves them', () => {
    const holders = new Set(secret.flatMap((n) => receiversOf(n, functions)));
    for (const fn of allNames) expect(t.environmentOf(fn).SECRETS_REVISION, fn).toBe(holders.has(fn) ? '7' : undefined);
  });

  it('puts nothing but platform/config.ts settings in any environment', () => {
    const allowed = new Set<string>([...KNOWN_SETTINGS, 'NODE_OPTIONS', 'SECRETS_REVISION']);
    for (const fn of allNames) for (const key of Object.keys(t.environmentOf(fn))) expect(allowed.has(key), `${fn} ${key}`).toBe(true);
  });

  it('lets no function read the operator secret at run time', () => {
    for (const fn of allNames)
      expect(
        t.actionsOf(fn).filter((a) => a.startsWith('secretsmanager:')),
        fn,
      ).toEqual([]);
    const policies = JSON.stringify(t.ofType('AWS::IAM::Policy').map(([, p]) => p.Properties as Json));
    expect(policies).not.toContain(operatorSecret);
  });
});
