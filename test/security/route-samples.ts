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

// --- memory and keys (issue 6) ---
import { keys as dbKeys } from '../../shared/db/keys';
import { tenant } from '../../shared/db/tenant';
import { call } from '../helpers/api';

/** A minimal agent item in the owner's partition: what memory ownership checks for. */
export async function putTestAgent(userId: string, agentId = `agt_${randomUUID().replaceAll('-', '')}`): Promise<string> {
  await tenant(userId).put({ ...dbKeys.agent(userId, agentId), agentId, name: 'test agent', status: 'running', createdAt: new Date().toISOString() });
  return agentId;
}

ownedResources.memory = async (owner) => ({ agentId: await putTestAgent(owner.userId) });

ownedResources.keys = async (owner) => {
  const res = await call('POST', '/api/keys', { body: { name: 'owned key' }, session: owner });
  if (res.status !== 201) throw new Error(`could not create an API key: ${res.status} ${res.text}`);
  return { id: res.body.id };
};

// --- agents (issue 5) ---
/** A real agent, provisioned through the API by its subscribed owner. */
ownedResources.agents = async (owner) => {
  await tenant(owner.userId).put({
    ...dbKeys.subscription(owner.userId),
    status: 'active',
    plan: 'solo',
    eventCreated: Date.now(),
    updatedAt: new Date().toISOString(),
  });
  const res = await call('POST', '/api/agents/provision', { body: { name: 'owned agent' }, session: owner });
  if (res.status !== 201) throw new Error(`could not provision an agent: ${res.status} ${res.text}`);
  return { id: res.body.agent.id };
};

// --- metrics (issue 6) ---
/** A heartbeat sample in the owner's partition (samples are written only by the heartbeat), so there is data to leak. */
ownedResources.metrics = async (owner) => {
  const { recordSample } = await import('../../shared/db/metrics');
  await recordSample(owner.userId, {
    timestamp: new Date().toISOString(),
    cpu: 12.5,
    memory: 25,
    messages: 3,
    errors: 1,
    responseMsTotal: 90,
    reachable: true,
    healthy: true,
  });
  return {};
};

// --- booking-settlement (issue 13 part A): an escrow of the owner, read by `get` ---
ownedResources.skills = async (owner) => {
  const bookingId = `bk${randomUUID().slice(0, 8)}`;
  await tenant(owner.userId).put({
    ...dbKeys.booking(owner.userId, bookingId),
    bookingId,
    status: 'pending',
    escrow: { guarantee: '1.000000', backend: '0.000000', deposit: '0.000000' },
    createdAt: new Date().toISOString(),
  });
  return { bookingId, action: 'get' };
};
