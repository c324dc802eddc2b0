import type { Node } from 'constructs';
import { SETTING_GROUPS, type Setting, type SettingGroup } from '#platform/config';

/**
 * Operator settings of the functions: every variable platform/config.ts declares (SETTING_GROUPS: each setting
 * says whether it is a secret, set by the stack or local only), and which functions receive it.
 *
 * - Plain settings come from the CDK context object `settings` (NAME → value, in cdk.json);
 *   `-c settings.CARD_PRICE_SOLO=price_...` overrides one of them, `-c settings='{...}'` replaces them all.
 * - Secret settings live in ONE Secrets Manager secret the stack creates (a JSON object, empty at
 *   first). The operator puts the values there and lists the names in the context `secretSettings`;
 *   each becomes a `{{resolve:secretsmanager:...}}` dynamic reference, resolved by CloudFormation at
 *   deploy time, so no value is ever in cdk.json, the template or cdk.out.
 * - A setting reaches only the functions SETTING_ROUTES names for it.
 */

type Groups = typeof SETTING_GROUPS;
type GroupName = keyof Groups;
/** Every setting's name. */
export type SettingName = { [G in GroupName]: keyof Groups[G] & string }[GroupName];

const DECLARED: readonly (readonly [SettingName, Setting, GroupName])[] = (Object.entries(SETTING_GROUPS) as [GroupName, SettingGroup][]).flatMap(
  ([group, settings]) => Object.entries(settings).map(([name, setting]) => [name as SettingName, setting, group] as const),
);
const namesWhere = (test: (setting: Setting) => unknown): SettingName[] => DECLARED.filter(([, setting]) => test(setting)).map(([name]) => name);

/** What a setting is when nobody sets it (platform/config.ts); undefined for a setting not declared there (yet). */
export const declaredDefault = (name: string): string | undefined => {
  const found = DECLARED.find(([declared]) => declared === name)?.[1].default;
  return found === undefined ? undefined : String(found);
};

/** Every variable platform/config.ts reads, in the order of its groups. */
export const KNOWN_SETTINGS: readonly SettingName[] = DECLARED.map(([name]) => name);

/** Set by the stack from its own resources or its top-level context keys; `settings` may not override them. */
export const STACK_SETTINGS: Readonly<Record<string, string>> = Object.fromEntries(
  DECLARED.flatMap(([name, setting]) => (setting.setByStack ? [[name, setting.setByStack]] : [])),
);

/** Meaningful only in the local stack and the tests (emulators, files, child processes, fake servers). */
export const LOCAL_ONLY_SETTINGS: readonly string[] = namesWhere((setting) => setting.localOnly);

/** What an operator may set in `settings` or `secretSettings`. */
export const OPERATOR_SETTINGS: readonly string[] = namesWhere((setting) => !setting.setByStack && !setting.localOnly);

/**
 * Credentials the operator sets: accepted only through the operator secret, never as a plain context value. Any other
 * setting may also go there when its value carries a key (an RPC URL with a provider key in its path).
 */
export const SECRET_SETTINGS: readonly string[] = namesWhere((setting) => setting.secret && !setting.setByStack && !setting.localOnly);

/**
 * Functions that reach the model layer (domain/ai); skills: the visual-synthesizer's image generation;
 * runtime-model: the agent runtime's chat completions; openai-compatible: the OpenAI-compatible API.
 */
const AI_FUNCTIONS = ['ai', 'agent-chat', 'runtime-model', 'gateway', 'skills', 'openai-compatible'] as const;

/** Every function, or every function behind the HTTP API (the request pipeline's settings). */
export type RouteTarget = readonly string[] | 'all' | 'http';

/** Where the operator settings of one group go: all to `to`, but for the settings `except` sends elsewhere. */
export type GroupRoute<G> = RouteTarget | { readonly to: RouteTarget; readonly except: { readonly [K in keyof G]?: RouteTarget } };

/**
 * THE routing table: settings group of platform/config.ts → the functions whose code reads its settings (found by
 * following each function's imports to its `config()` and section accessor reads). Only the operator settings of a
 * group are routed; a group with none has no entry.
 */
export const SETTING_ROUTES: { readonly [G in GroupName]?: GroupRoute<Groups[G]> } = {
  // data/client.ts: every function talks to the table; http/pipeline.ts and domain/auth: the deadline of every API
  // request, sessions, CSRF, cookies
  core: {
    to: 'http',
    except: {
      LOG_LEVEL: 'all',
      DYNAMODB_CONNECT_TIMEOUT_MS: 'all',
      DYNAMODB_REQUEST_TIMEOUT_MS: 'all',
      DYNAMODB_MAX_ATTEMPTS: 'all',
      HEALTH_PROBE_CACHE_MS: ['platform'],
    },
  },
  requestLimits: 'http',
  // treasury and wallet-transfer (skills) read balances through the wallet RPC
  wallet: { to: ['wallet', 'skills'], except: { WALLET_NETWORK: ['wallet'] } },
  hostedWallet: ['wallet'],
  infraMcp: ['infra-mcp'],
  // accounts: sign-up, password reset, bot check; OAuth and wallet sign-in are their own functions, so this one carries none of their code
  referral: ['accounts'],
  email: ['accounts', 'settings', 'provisioner', 'webhook-delivery'],
  botCheck: ['accounts'],
  signInTiming: ['accounts'],
  webhooks: ['webhook-delivery'],
  // the deletion worker (provisioner) cancels the card subscription of a deleted account; billing's
  // card actions and the card group call the processor
  card: ['billing', 'card', 'provisioner'],
  oauth: ['oauth-sign-in'],
  // SIWE smart-wallet checks (wallet-sign-in), the token-gating RPC fallback (social) and agent verification
  chain: ['wallet-sign-in', 'social', 'agent-verification'],
  social: ['social'],
  gating: ['social'],
  // domain/ai (the model layer): the AI routes, agent chat, the runtime's chat and the gateway's plugins
  model: AI_FUNCTIONS,
  // plan access reads the catalogue wherever entitlements are checked
  ai: { to: AI_FUNCTIONS, except: { AI_CATALOGUE: 'http' } },
  provisioning: { to: ['provisioner'], except: { RUNTIME_VERSION: ['agents', 'instance', 'provisioner'], APPROVED_RUNTIME_IMAGES: ['instance'] } },
  streaming: ['provision', 'skills'],
  heartbeat: ['heartbeat'],
  metrics: ['metrics'],
  // the treasury and file-manager skills, and the stablecoin usdc-payments and instant-split send
  treasury: ['skills'],
  files: ['skills'],
  paymentToken: ['skills'],
  // v1 gateway: machine payments, prices and CORS origins; the one-off card checkout of a gateway call
  // (card) is priced from the gateway's prices
  gateway: {
    to: ['gateway'],
    except: { GATEWAY_PRICES: ['gateway', 'card'], GATEWAY_CARD_PRICES: ['gateway', 'card'], GATEWAY_CARD_RATE: ['gateway', 'card'] },
  },
  // agent verification: EAS attestations (EAS_RPC_URL defaults to CHAIN_RPC_URL), Coinbase Verifications (EAS on Base), ENS names
  eas: ['agent-verification'],
  coinbaseVerification: ['agent-verification'],
  ens: ['agent-verification'],
  // channel skills: the skills send and receive, the heartbeat delivers due posts
  channels: ['skills', 'heartbeat'],
  // the task-state events relaunch a task that stopped; the heartbeat re-drives stranded provisioning
  healing: ['task-events'],
  redrive: ['heartbeat'],
  // chats, channel messages and scheduled runs wait this long for an idle-stopped instance to wake
  wake: ['agent-chat', 'skills', 'heartbeat', 'openai-compatible'],
};

const groupOf = new Map<string, GroupName>(DECLARED.map(([name, , group]) => [name, group]));
const operator = new Set(OPERATOR_SETTINGS);

/** A group's route with its exceptions by plain name. */
type AnyGroupRoute = RouteTarget | { readonly to: RouteTarget; readonly except: Readonly<Record<string, RouteTarget | undefined>> };
const isTarget = (route: AnyGroupRoute): route is RouteTarget => typeof route === 'string' || Array.isArray(route);
const routeOfGroup = (group: GroupName): AnyGroupRoute | undefined => SETTING_ROUTES[group];

/** The functions an operator setting goes to: its group's route, or the group's exception for it. */
export function routeOf(name: string): RouteTarget | undefined {
  const group = groupOf.get(name);
  const route = group && operator.has(name) ? routeOfGroup(group) : undefined;
  if (route === undefined || isTarget(route)) return route;
  return route.except[name] ?? route.to;
}

/** Every target of the routing table, by where it stands in it (`card`, `core.LOG_LEVEL`). */
export function routeTargets(): [string, RouteTarget][] {
  return (Object.keys(SETTING_ROUTES) as GroupName[]).flatMap((group): [string, RouteTarget][] => {
    const route = routeOfGroup(group)!;
    if (isTarget(route)) return [[group, route]];
    const exceptions = Object.entries(route.except).flatMap(([name, target]): [string, RouteTarget][] => (target ? [[`${group}.${name}`, target]] : []));
    return [[group, route.to], ...exceptions];
  });
}

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
  for (const [key, target] of routeTargets()) {
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
