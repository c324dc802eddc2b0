import { beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_SETTINGS } from '#lib/settings';
import { settingsAsFunctionsReadThem } from '#build/plugins/settings-for-the-functions';
import { CORE_GROUPS, type SettingGroup } from '#platform/config';
import { buildAllAsDeployed, type DeployedBundle } from '../helpers/deployed-bundle';

/**
 * platform/config.ts keeps the core in config() and every other section behind a pure accessor:
 * a function's cold start carries only the sections its code reads, with their settings.
 */

const FOLDERS = ['platform', 'memory', 'keys'];
/** Settings of sections none of these functions reads (card, OAuth, gateway, channels, webhooks, EAS). */
const UNREAD = [
  'CARD_WEBHOOK_TOLERANCE_SECONDS',
  'OAUTH_WEBID_ISSUER',
  'MPP_CHAIN_ID',
  'GATEWAY_CARD_PRICES',
  'CHANNEL_TELEGRAM_API_URL',
  'WEBHOOK_RETRY_SCHEDULE_MS',
  'EAS_SCHEMA_UID',
];
/** What config() parses, the request path of every function: the settings of the core's groups, in the order of KNOWN_SETTINGS. */
const CORE = CORE_GROUPS.flatMap((group) => Object.keys(group));

const settingsNamedIn = (code: string) => KNOWN_SETTINGS.filter((name) => new RegExp(`\\b${name}\\b`).test(code));

let bundles: Record<string, DeployedBundle>;

beforeAll(async () => {
  bundles = await buildAllAsDeployed(FOLDERS);
}, 60_000);

describe('configuration sections at the cold start', () => {
  it.each(FOLDERS)('%s: carries the core settings and none of a section it never reads', (folder) => {
    const named = settingsNamedIn(bundles[folder]!.initCode);
    expect(named).toEqual(expect.arrayContaining(['TABLE_NAME', 'JWT_SECRET', 'RATE_LIMITS']));
    expect(named.filter((name) => UNREAD.includes(name))).toEqual([]);
  });

  it('platform (DynamoDB only) carries the core and nothing else', () => {
    expect(settingsNamedIn(bundles.platform!.initCode)).toEqual(CORE);
  });

  it("platform carries the core's schemas and defaults, and none of what only the stack reads of them", () => {
    const code = bundles.platform!.initCode;
    const settings = CORE_GROUPS.flatMap((group: SettingGroup) => Object.values(group));
    const prose = settings.flatMap((setting) => [setting.description, setting.setByStack]).filter((text) => text !== undefined);
    expect(prose.length).toBeGreaterThan(10);
    expect(prose.filter((text) => code.includes(text))).toEqual([]);
    expect(code).toContain('agent-platform-api');
    expect(code).not.toMatch(/\bsecret:!0|\blocalOnly:/);
  });
});

describe('platform/config.ts as the functions load it', () => {
  it('drops what only the stack reads from each setting, and nothing from other objects', async () => {
    const source = [
      "const G = { A: { schema: () => z.string(), default: 'd', secret: true, localOnly: true, setByStack: 'the stack', description: 'prose' } } as const;",
      "const other = { description: 'kept', secret: 'kept too' };",
    ].join('\n');
    const loaded = await settingsAsFunctionsReadThem(source);
    for (const gone of ['prose', 'the stack', 'localOnly', 'secret: true']) expect(loaded).not.toContain(gone);
    for (const kept of ["default: 'd'", 'schema: () => z.string()', "description: 'kept'", "secret: 'kept too'"]) expect(loaded).toContain(kept);
  });
});
