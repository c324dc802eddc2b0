import { createHash, timingSafeEqual } from 'node:crypto';
import type { InstanceStatus } from '#data/agents';
import { gatewayTokenHash, getInstance, userIdForSubdomain } from '#data/instances';
import { getSubscription } from '#data/subscriptions';
import { ownerRights } from '#domain/auth/runtime-agent';
import { accessFrom } from '#domain/billing/entitlements';
import { PLANS } from '#domain/billing/plans';

/**
 * Where a subdomain's traffic goes, read from the records: the subdomain's look-up names the
 * account, the instance record its status and the address its launcher registered, the gateway
 * token item the hash the edge checks tokens against, and the plan the connection cap.
 */
export interface Route {
  userId: string;
  status: InstanceStatus;
  generation: number;
  operationId?: string;
  /** Set when the platform stopped it on its own (`idle`, `budget`). */
  stopReason?: string;
  /** The instance's registered address (`http://host:port`): the only place the edge forwards to. */
  endpoint?: string;
  /** SHA-256 (hex) of the account's gateway token; undefined before any token exists. */
  tokenHash?: string;
  /** Open connections the plan allows through the edge to this instance. */
  connectionCap: number;
}

export type RouteLoader = (subdomain: string) => Promise<Route | undefined>;

/** The records' answer for one subdomain; undefined when no instance has it. */
export const routeFromRecords: RouteLoader = async (subdomain) => {
  const userId = await userIdForSubdomain(subdomain);
  if (!userId) return undefined;
  const [instance, tokenHash, connectionCap] = await Promise.all([getInstance(userId, true), gatewayTokenHash(userId), connectionCapOf(userId)]);
  if (!instance) return undefined;
  return {
    userId,
    status: instance.status,
    generation: instance.generation,
    operationId: instance.operationId,
    stopReason: instance.stopReason,
    endpoint: instance.handle?.endpoint,
    tokenHash,
    connectionCap,
  };
};

/** The plan's cap, as the account's rights are now (admins at `network`; an account without a plan at the smallest). */
async function connectionCapOf(userId: string): Promise<number> {
  const [rights, subscription] = await Promise.all([ownerRights(userId), getSubscription(userId)]);
  const access = accessFrom({ userId, isAdmin: rights?.isAdmin ?? false, isTester: rights?.isTester ?? false }, subscription);
  return (access.limits ?? PLANS.label).edgeConnections;
}

/** Whether `presented` is the token whose hash the route holds; constant time on the hashes. */
export function tokenMatches(route: Pick<Route, 'tokenHash'>, presented: string): boolean {
  if (!route.tokenHash) return false;
  const a = createHash('sha256').update(presented).digest();
  const b = Buffer.from(route.tokenHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface RouteCacheOptions {
  load: RouteLoader;
  /** How long an answer is kept: the bound on how late the edge sees a relaunch, a stop or a rotated token. */
  ttlMs: number;
  /** Most subdomains kept; the oldest answers go first. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * The records' answers kept for `ttlMs` (a miss too, so a scan of made-up subdomains costs one read
 * per name and bound), with one read in flight per subdomain however many requests wait on it.
 * The edge drops an answer at once when the lifecycle moved under it: the registered address
 * refused the connection, or a wake or start it waited for finished.
 */
export function routeCache({ load, ttlMs, maxEntries = 10_000, now = Date.now }: RouteCacheOptions) {
  const answers = new Map<string, { route: Route | undefined; at: number }>();
  const inFlight = new Map<string, Promise<Route | undefined>>();
  return {
    async get(subdomain: string): Promise<Route | undefined> {
      const kept = answers.get(subdomain);
      if (kept && now() - kept.at < ttlMs) return kept.route;
      const pending = inFlight.get(subdomain);
      if (pending) return pending;
      const read = load(subdomain)
        .then((route) => {
          answers.delete(subdomain);
          answers.set(subdomain, { route, at: now() });
          if (answers.size > maxEntries) answers.delete(answers.keys().next().value!);
          return route;
        })
        .finally(() => inFlight.delete(subdomain));
      inFlight.set(subdomain, read);
      return read;
    },
    invalidate(subdomain: string): void {
      answers.delete(subdomain);
    },
    get size() {
      return answers.size;
    },
  };
}

export type RouteCache = ReturnType<typeof routeCache>;
