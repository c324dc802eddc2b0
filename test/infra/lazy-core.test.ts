import { beforeAll, describe, expect, it } from 'vitest';
import { contract } from '#contract';
import { call } from '../helpers/api';
import { buildAllAsDeployed, type DeployedBundle } from '../helpers/deployed-bundle';

/**
 * What every function pays at its cold start. Session tokens: jose is loaded by the first
 * token signed or verified. GET /api/openapi.json is generated from every contract group: its
 * function's cold start carries only its own group, the generator with the other groups' schemas is
 * a lazy chunk loaded by the first request, and later requests reuse the serialized text.
 */

const FOLDERS = ['api-document', 'platform', 'keys'];
const OTHER_GROUP_CONTRACTS = new Set(contract.filter((g) => g.group !== 'api-document').map((g) => `contract/${g.group}.ts`));

let bundles: Record<string, DeployedBundle>;

beforeAll(async () => {
  bundles = await buildAllAsDeployed(FOLDERS);
}, 60_000);

describe('session tokens', () => {
  it.each(FOLDERS)('%s: jose is loaded on first use, not at init', (folder) => {
    const atInit = bundles[folder]!.atInit;
    expect(atInit).toContain('domain/auth/jwt.ts');
    expect(atInit.filter((i) => i.includes('node_modules/jose/'))).toEqual([]);
    expect(bundles[folder]!.reachable.some((i) => i.endsWith('node_modules/jose/dist/webapi/jwt/verify.js'))).toBe(true);
  });
});

describe('the OpenAPI document function', () => {
  it('loads the document generator and the other groups only on its first request', () => {
    const atInit = bundles['api-document']!.atInit;
    expect(atInit).toContain('functions/http/api-document/handler.ts');
    expect(OTHER_GROUP_CONTRACTS.size).toBeGreaterThan(20);
    expect(atInit.filter((i) => i === 'contract/document.ts' || i === 'contract/openapi.ts' || OTHER_GROUP_CONTRACTS.has(i))).toEqual([]);
    expect(bundles['api-document']!.reachable).toContain('contract/document.ts');
  });

  it('keeps the zod core the contract does not use (z.compile) out of its init', () => {
    // The generator shares zod's files with the cold start: one run-time read of the `z.core`
    // namespace in it brought all of zod core (~60 KB) into the init chunk.
    const atInit = bundles['api-document']!.atInit;
    expect(atInit.filter((i) => i.endsWith('zod/v4/core/compile.js') || i.endsWith('zod/v4/core/doc.js'))).toEqual([]);
  });

  it('serves the same JSON document on every request', async () => {
    const first = await call('GET', '/api/openapi.json');
    const second = await call('GET', '/api/openapi.json');
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.body.openapi).toBe('3.1.0');
    expect(Object.keys(first.body.paths)).toContain('/api/openapi.json');
    expect(Object.keys(first.body.paths).length).toBeGreaterThan(50);
    expect(second.text).toBe(first.text);
  });
});
