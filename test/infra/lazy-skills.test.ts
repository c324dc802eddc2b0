import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { initLoadedOutputs, reachableOutputs } from '#build/bundling';
import { skillLoaders } from '#functions/http/skills/registry';
import { SKILL_CATALOGUE } from '#contract/skills';
import { buildAsDeployed, type DeployedBundle } from '../helpers/deployed-bundle';

/**
 * The skills function answers some 40 routes, and each call runs one skill: a skill's module (and
 * what only it uses) is parsed on that skill's first call, not at every cold start. A
 * static import of a skill module anywhere in the handler's graph pulls it back into init and fails this.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SKILL_FILES = readdirSync(path.join(ROOT, 'functions/http/skills/skills')).map((f) => `functions/http/skills/skills/${f}`);
/**
 * The skills' action bodies: a skill's module validates with its own (lazy) file, and the bundles leave
 * the contract's table of them out (build/plugins/contract-without-docs.ts). events.ts stays: the
 * catalogue import routes' bodies use its entries.
 */
const ACTION_BODY_FILES = readdirSync(path.join(ROOT, 'contract/skill-actions'))
  .filter((f) => f !== 'events.ts')
  .map((f) => `contract/skill-actions/${f}`);
/** zod's JSON Schema and compiled-parser code, which nothing in the function calls at init (using `z.core` as a value keeps it). */
const ZOD_UNUSED_AT_INIT = ['zod/v4/core/compile.js', 'zod/v4/core/to-json-schema.js', 'zod/v4/core/json-schema-processors.js'];
/** Only the messaging apps' webhooks, or only the routes that reach the agent's instance, need these. */
const ROUTE_SPECIFIC = ['domain/chat/channel-inbound.ts', 'domain/chat/chat.ts', 'functions/http/skills/instance-calls.ts', 'data/instances.ts'];

let skills: DeployedBundle;

beforeAll(async () => {
  skills = await buildAsDeployed('skills');
}, 120_000);

describe('the skills function', () => {
  it('parses no skill module and no route-specific code at init', () => {
    const atInit = new Set(skills.atInit);
    expect(atInit.has('functions/http/skills/handler.ts')).toBe(true);
    expect([...SKILL_FILES, ...ROUTE_SPECIFIC].filter((f) => atInit.has(f))).toEqual([]);
  });

  it("parses no skill's action bodies and none of zod's JSON Schema code at init", () => {
    const atInit = skills.atInit;
    expect(ACTION_BODY_FILES.length).toBeGreaterThan(10);
    expect(ACTION_BODY_FILES.filter((f) => atInit.includes(f))).toEqual([]);
    expect(atInit.some((f) => f.endsWith('zod/v4/core/schemas.js'))).toBe(true);
    expect(atInit.filter((f) => ZOD_UNUSED_AT_INIT.some((z) => f.endsWith(`node_modules/${z}`)))).toEqual([]);
  });

  it('loads its init code in one chunk, however many lazy modules share parts of it (build/plugins/lazy-entries-share-the-init.ts)', () => {
    // index.mjs, the chunk of the init code and esbuild's runtime helpers; 43 files without the plugin.
    expect(initLoadedOutputs(skills.metafile, skills.entry).length).toBeLessThanOrEqual(3);
    expect(reachableOutputs(skills.metafile, skills.entry).length).toBeGreaterThan(SKILL_FILES.length);
  });

  it('still carries every skill module, behind an import()', () => {
    const ever = new Set(skills.reachable);
    expect(SKILL_FILES.length).toBe(SKILL_CATALOGUE.length);
    expect([...SKILL_FILES, ...ROUTE_SPECIFIC].filter((f) => !ever.has(f))).toEqual([]);
  });

  it('loads, for each catalogue name, the module of that skill', async () => {
    for (const { name } of SKILL_CATALOGUE) expect((await skillLoaders[name]()).name, name).toBe(name);
  });
});
