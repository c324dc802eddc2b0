import type { Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ROOT, textOfBundle } from '../helpers/plugin-build';
import { settingsForTheFunctions } from '#build/plugins/settings-for-the-functions';

// A function reading one section of the settings (platform/config.ts), as every function does.
const bundleText = (plugins: Plugin[]) =>
  textOfBundle({ stdin: { contents: "export { config } from '#platform/config';", resolveDir: ROOT, sourcefile: 'probe.ts', loader: 'ts' } }, plugins);

describe('settings-for-the-functions (build/plugins)', () => {
  it("leaves the settings' descriptions out of a function's bundle and keeps their defaults", async () => {
    const description = 'How long connecting to DynamoDB may take.';
    const whole = await bundleText([]);
    const trimmed = await bundleText([settingsForTheFunctions]);
    expect(whole.includes(description)).toBe(true);
    expect(trimmed.includes(description)).toBe(false);
    expect(trimmed).toContain('DYNAMODB_CONNECT_TIMEOUT_MS');
    expect(trimmed.length).toBeLessThan(whole.length);
  });
});
