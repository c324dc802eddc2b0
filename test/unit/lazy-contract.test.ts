import { describe, expect, it, vi } from 'vitest';
import type { RouteDefinition } from '#contract/route';

/**
 * A Lambda's cold start builds no contract schema (contract/route.ts `lazySchema`): every
 * zod/mini factory the contract modules call is counted, and loading every contract module must call
 * none. Building the OpenAPI document, which needs them all, proves the counter sees the calls.
 */
const built = vi.hoisted(() => ({ count: 0, names: new Set<string>() }));

vi.mock('zod/mini', async (importOriginal) => {
  const real = await importOriginal<Record<string, unknown>>();
  const counted = (name: string, fn: (...args: unknown[]) => unknown) =>
    function (this: unknown, ...args: unknown[]) {
      built.count++;
      built.names.add(name);
      return fn.apply(this, args);
    };
  const wrapNamespace = (prefix: string, ns: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(ns).map(([k, v]) => [
        k,
        typeof v === 'function' && /^[a-z_]/.test(k) && k !== 'config' ? counted(`${prefix}${k}`, v as (...a: unknown[]) => unknown) : v,
      ]),
    );
  return {
    ...wrapNamespace('', real),
    iso: wrapNamespace('iso.', real.iso as Record<string, unknown>),
    coerce: wrapNamespace('coerce.', real.coerce as Record<string, unknown>),
  };
});

describe('contract schemas are built on first use, not at import', () => {
  it('importing every contract module builds no schema; the route that is called builds only its own', async () => {
    // The worker setup validated every setting (platform/config.ts builds those schemas): start from a
    // fresh module registry, so each contract module really loads here, with the counter at zero.
    vi.resetModules();
    built.count = 0;
    built.names.clear();
    const { contract } = await import('#contract');
    await import('#contract/document');
    await import('#contract/skill-actions/index');
    expect([...built.names], 'zod/mini factories called while the contract modules loaded').toEqual([]);
    expect(built.count).toBe(0);

    const { schemasOf } = await import('#contract/route');
    const createKey = contract.flatMap((g) => g.routes).find((r) => r.operation === 'createApiKey')!;
    const first = schemasOf(createKey);
    // The body is built on its first read (the pipeline reads it unless the handler validates it).
    expect(built.count).toBe(0);
    expect(first.body).toBeDefined();
    const afterOneRoute = built.count;
    expect(afterOneRoute).toBeGreaterThan(0);
    // Built once: the next request of the route reuses the same schemas.
    expect(schemasOf(createKey)).toBe(first);
    expect(schemasOf(createKey).body).toBe(first.body);
    expect(built.count).toBe(afterOneRoute);

    const { openApiDocument } = await import('#contract/document');
    openApiDocument({ version: 'test' });
    // The document needs every schema of every group: far more than one route's.
    expect(built.count).toBeGreaterThan(afterOneRoute * 20);
  });
});

describe('the skills contract alone, as the skills function loads it', () => {
  it("builds a skill route's body from the skills' action bodies on first read only (the bundles leave the table out: build/plugins/contract-without-docs.ts)", async () => {
    vi.resetModules();
    const { skillsContract } = await import('#contract/skills');
    const { schemasOf } = await import('#contract/route');
    const calendar: RouteDefinition = skillsContract.routes.find((r) => r.operation === 'skillCalendar')!;
    // The pipeline reads a route's params and query on every call, its body only when it validates it.
    expect(calendar.bodyHandling?.validatedBy === 'handler').toBe(true);
    const schemas = schemasOf(calendar);
    expect(schemas.params).toBeUndefined();
    expect(calendar.example).toMatchObject({ action: 'create_event' });
    const { safeParse } = await import('zod/mini');
    expect(safeParse(schemas.body!, { action: 'list_events' }).success).toBe(true);
    expect(safeParse(schemas.body!, { action: 'no_such_action' }).success).toBe(false);
  });
});

describe('no function builds a schema at its cold start', () => {
  it('loading every function handler calls no zod/mini factory', async () => {
    const { readdirSync, existsSync } = await import('node:fs');
    const root = new URL('../../functions/', import.meta.url);
    const handlers = ['http', 'workers'].flatMap((kind) =>
      readdirSync(new URL(`${kind}/`, root))
        .map((name) => `${kind}/${name}`)
        .filter((name) => existsSync(new URL(`${name}/handler.ts`, root))),
    );
    expect(handlers.length).toBeGreaterThan(20);
    vi.resetModules();
    built.count = 0;
    built.names.clear();
    for (const name of handlers) await import(/* @vite-ignore */ new URL(`${name}/handler.ts`, root).href);
    expect([...built.names], 'zod/mini factories called while the handlers loaded').toEqual([]);
  });
});
