import { beforeAll, describe, expect, it } from 'vitest';
import { WORKERS } from '#lib/constructs/functions';
import { contract } from '#contract';
import { buildAllAsDeployed, type DeployedBundle } from '../helpers/deployed-bundle';

/**
 * The libraries only some routes (or only a first call) need are loaded on that call, not at a
 * function's cold start: built with code splitting, no function's init path (its entry
 * and the chunks it imports statically) holds any of them, while the functions that call them still
 * carry them in a lazy chunk. A static import anywhere in a function's graph fails this.
 */

const LAZY_LIBRARIES = /node_modules\/(ai|@ai-sdk\/[^/]+|stripe|croner|hash-wasm|oauth4webapi)\//;

/** Functions that call each library: it must still be in their bundle, behind an `import()`. */
const CALLERS: Record<string, string[]> = {
  ai: ['ai', 'gateway', 'runtime-model', 'skills', 'openai-compatible'],
  stripe: ['billing', 'card', 'provisioner'],
  croner: ['heartbeat', 'agent-autonomy'],
  'hash-wasm': ['accounts', 'settings'],
  oauth4webapi: ['oauth-sign-in'],
};

const folders = [...new Set([...contract.map((g) => g.group), ...WORKERS.map((w) => w.folder ?? w.name)])];

let bundles: Record<string, DeployedBundle>;

beforeAll(async () => {
  bundles = await buildAllAsDeployed(folders);
}, 180_000);

describe('route-specific libraries behind dynamic import', () => {
  it("are in no function's init path", () => {
    for (const folder of folders) {
      const atInit = bundles[folder]!.atInit.filter((i) => LAZY_LIBRARIES.test(i));
      expect(atInit, folder).toEqual([]);
    }
  });

  it('stay in the bundles of the functions that call them, in a lazy chunk', () => {
    for (const [library, callers] of Object.entries(CALLERS)) {
      const pattern = new RegExp(`node_modules/${library}/`);
      for (const folder of callers) {
        expect(folders, folder).toContain(folder);
        expect(
          bundles[folder]!.reachable.some((i) => pattern.test(i)),
          `${library} in ${folder}`,
        ).toBe(true);
      }
    }
  });
});
