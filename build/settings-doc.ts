import { SETTING_GROUPS, type Setting, type SettingGroup } from '#platform/config';
import { docBlock, withDocBlock } from './doc-blocks';

/**
 * The settings section of docs/deploy.md, generated from the declarations in platform/config.ts so the guide cannot
 * fall behind them: one table per group, every setting with its default, whether it is a secret, who sets it in AWS
 * and what it does.
 */

export const SETTINGS_BEGIN = '<!-- settings:begin -->';
export const SETTINGS_END = '<!-- settings:end -->';

/** A group's name as a reader says it: `hostedWallet` → `hosted wallet`. */
const spoken = (group: string): string => group.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

/** Markdown-safe table cell: pipes escaped, line breaks folded. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

const shownDefault = (setting: Setting): string => {
  if (setting.default === undefined) return '—';
  const text = typeof setting.default === 'string' ? setting.default : JSON.stringify(setting.default);
  return text === '' ? '(empty)' : `\`${cell(text)}\``;
};

/** Who sets the setting in AWS: the stack (and from what), nobody (local only), or the operator (plain or secret). */
const whoSets = (setting: Setting): string => {
  if (setting.setByStack) return `stack: ${cell(setting.setByStack)}`;
  if (setting.localOnly) return 'local only';
  return setting.secret ? 'operator, `secretSettings`' : 'operator, `settings`';
};

const row = (group: string, name: string, setting: Setting): string =>
  [
    `\`${name}\``,
    shownDefault(setting),
    setting.secret ? 'yes' : 'no',
    setting.localOnly ? 'yes' : 'no',
    whoSets(setting),
    cell(setting.description ?? `Part of the ${spoken(group)} settings.`),
  ].join(' | ');

/** The generated block, markers included. */
export function renderSettings(groups: Readonly<Record<string, SettingGroup>> = SETTING_GROUPS): string {
  const entries = Object.entries(groups);
  const count = entries.reduce((sum, [, settings]) => sum + Object.keys(settings).length, 0);
  const sections = entries.flatMap(([group, settings]) => [
    `#### ${spoken(group)} (\`${group}\`)`,
    '',
    '| Setting | Default | Secret | Local only | Set in AWS by | What it does |',
    '|---|---|---|---|---|---|',
    ...Object.entries(settings).map(([name, setting]) => `| ${row(group, name, setting)} |`),
    '',
  ]);
  return [
    SETTINGS_BEGIN,
    '<!-- generated from platform/config.ts by `npm run settings-doc -- --write`: edit the declarations, not these tables -->',
    '',
    `${count} settings in ${entries.length} groups.`,
    '',
    ...sections,
    SETTINGS_END,
  ].join('\n');
}

const SETTINGS_MARKERS = { begin: SETTINGS_BEGIN, end: SETTINGS_END, doc: 'docs/deploy.md' };

/** The settings block of `doc`, markers included; undefined when the markers are missing. */
export const settingsBlock = (doc: string): string | undefined => docBlock(doc, SETTINGS_MARKERS);

/** The document with its settings block replaced by `block`. */
export const withSettings = (doc: string, block: string): string => withDocBlock(doc, SETTINGS_MARKERS, block);
