import { randomUUID } from 'node:crypto';
import type { ContractRoute } from '../../shared/contract';
import type { TestSession } from '../helpers/api';

/**
 * How the generic suites fill a route's path and query: ids default to fresh random ones (which
 * nobody owns), `{userId}` to the caller's own id. Groups whose routes need a resource that
 * exists register an owner-side factory in `ownedResources`, so the cross-tenant suite can point
 * another user at it.
 */
export function fillPath(route: ContractRoute, values: Record<string, string>): string {
  return route.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(values[name] ?? `r${randomUUID().slice(0, 8)}`));
}

export function defaultQuery(route: ContractRoute, values: Record<string, string> = {}): string {
  const shape = (route.query?.shape ?? {}) as Record<string, { safeParse: (v: unknown) => { success: boolean } }>;
  const q = new URLSearchParams();
  for (const [name, schema] of Object.entries(shape)) {
    if (values[name] !== undefined) q.set(name, values[name]!);
    else if (!schema.safeParse(undefined).success) q.set(name, name.toLowerCase().endsWith('id') ? `r${randomUUID().slice(0, 8)}` : 'x');
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const hasBody = (r: ContractRoute) => r.body !== undefined && !r.rawBody;

/**
 * Resources a user owns, created through the real API by the owner, keyed by path or query
 * parameter name. A later issue adds its group's factory here when its routes are built.
 */
export type OwnedResourceFactory = (owner: TestSession) => Promise<Record<string, string>>;
export const ownedResources: Record<string, OwnedResourceFactory> = {};
