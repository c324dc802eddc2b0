import { afterAll, beforeAll } from 'vitest';
import { reloadConfig } from '#platform/config';
import { startFakeModelServer, type FakeModelServer } from './fake-model-server';

/**
 * A fake model provider on loopback configured as the platform's providers for one test file: the
 * OpenAI-compatible aggregator (MODEL_API_BASE_URL) and, unless `direct: false`, Anthropic's own API
 * (ANTHROPIC_BASE_URL) on the same fake. Every setting touched is restored after the file.
 */
export function useFakeModelProviders(opts: { direct?: boolean; settings?: Record<string, string> } = {}) {
  const bed = {} as { model: FakeModelServer; apply(settings: Record<string, string | undefined>): void };
  const saved = { ...process.env };
  const touched = new Set<string>();
  bed.apply = (settings) => {
    for (const k of Object.keys(settings)) touched.add(k);
    reloadConfig(settings);
  };
  beforeAll(async () => {
    bed.model = await startFakeModelServer();
    bed.apply({
      MODEL_API_BASE_URL: bed.model.baseUrl,
      MODEL_API_KEY: 'test-aggregator-key',
      ...(opts.direct === false ? {} : { ANTHROPIC_BASE_URL: bed.model.baseUrl, ANTHROPIC_API_KEY: 'test-anthropic-key' }),
      ...opts.settings,
    });
  });
  afterAll(async () => {
    await bed.model.close();
    reloadConfig(Object.fromEntries([...touched].map((k) => [k, saved[k]])));
  });
  return bed;
}
