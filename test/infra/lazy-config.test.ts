import { beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_SETTINGS } from '#lib/settings';
import { CORE_GROUPS } from '#platform/config';
import { buildAllAsDeployed, type DeployedBundle } from '../helpers/deployed-bundle';

/**
 * platform/config.ts keeps the core in config() and every other section behind a pure accessor
 * (issue 16): a function's cold start carries only the sections its code reads, with their settings.
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
});
