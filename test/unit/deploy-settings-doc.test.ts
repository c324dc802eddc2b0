import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderSettings, SETTINGS_BEGIN, settingsBlock } from '#build/settings-doc';
import { SETTING_GROUPS } from '#platform/config';

const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/deploy.md'), 'utf8');

describe('docs/deploy.md settings', () => {
  it('matches what the generator makes of platform/config.ts (npm run settings-doc -- --write)', () => {
    expect(settingsBlock(doc)).toBe(renderSettings());
  });

  it('lists every declared setting once, with a description or its group as fallback', () => {
    const block = renderSettings();
    for (const [group, settings] of Object.entries(SETTING_GROUPS)) {
      expect(block).toContain(`(\`${group}\`)`);
      for (const name of Object.keys(settings)) expect(block.split(`| \`${name}\` |`)).toHaveLength(2);
    }
    expect(block).not.toContain('…');
  });

  it('describes every stack context key cdk.json declares', () => {
    const cdkJson = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../cdk.json'), 'utf8')) as { context: Record<string, unknown> };
    const keys = Object.keys(cdkJson.context).filter((key) => key !== 'cli-telemetry');
    expect(keys.length).toBeGreaterThan(10);
    for (const key of keys) expect(doc, key).toContain(`| \`${key}\` |`);
  });

  it('marks secrets and local-only settings', () => {
    const block = renderSettings({ g: { A: { schema: () => ({}) as never, secret: true }, B: { schema: () => ({}) as never, localOnly: true, default: 3 } } });
    expect(block.startsWith(SETTINGS_BEGIN)).toBe(true);
    expect(block).toContain('| `A` | — | yes | no | operator, `secretSettings` | Part of the g settings. |');
    expect(block).toContain('| `B` | `3` | no | yes | local only | Part of the g settings. |');
  });
});
