import { getSessionGate, putSessionGate } from '#data/session-gates';

/**
 * Revocation for stateless session JWTs. A password change or reset writes `validAfterMs` (and the
 * session that made the change, which survives); tokens issued before it are refused.
 *
 * The gate is cached per container for GATE_CACHE_MS so a steady stream of requests costs no extra
 * read: a revoked session may keep working in *other* warm containers for at most that long. The
 * container that revokes forgets its cache at once.
 */
export const GATE_CACHE_MS = 30_000;

interface Gate {
  validAfterMs: number;
  keepSessionId?: string;
  fetchedAt: number;
}

const cache = new Map<string, Gate>();

async function gateOf(userId: string, now: number): Promise<Gate> {
  const hit = cache.get(userId);
  if (hit && now - hit.fetchedAt < GATE_CACHE_MS) return hit;
  const item = await getSessionGate(userId);
  const gate = { validAfterMs: item?.validAfterMs ?? 0, keepSessionId: item?.keepSessionId, fetchedAt: now };
  if (cache.size > 10_000) cache.clear();
  cache.set(userId, gate);
  return gate;
}

export async function sessionIsValid(userId: string, sessionId: string, issuedAtMs: number, now = Date.now()): Promise<boolean> {
  const gate = await gateOf(userId, now);
  return issuedAtMs >= gate.validAfterMs || sessionId === gate.keepSessionId;
}

/** Refuses every session of the user issued until now, except `keepSessionId` (the caller's own). */
export async function revokeSessions(userId: string, keepSessionId?: string, now = Date.now()): Promise<void> {
  await putSessionGate(userId, now, keepSessionId);
  cache.delete(userId);
}
