import * as keys from './keys';
import { tenant } from './tenant';

/**
 * The account's session gate (`SESSIONS`): sessions issued before `validAfterMs` are revoked, but
 * for `keepSessionId`, the session that revoked the others. Account deletion keeps this record
 * (data/account-deletion.ts) so the deleted account's tokens stay refused.
 */
export interface SessionGateRecord {
  validAfterMs?: number;
  keepSessionId?: string;
}

/** An eventually consistent read: the caller caches the gate per container anyway. Undefined: never revoked. */
export async function getSessionGate(userId: string): Promise<SessionGateRecord | undefined> {
  const item = await tenant(userId).get<SessionGateRecord & Record<string, unknown>>(keys.sessionGate(userId));
  return item && { validAfterMs: item.validAfterMs, keepSessionId: item.keepSessionId };
}

/** Replaces the account's gate, written at `validAfterMs`: every session issued before it is refused. */
export async function putSessionGate(userId: string, validAfterMs: number, keepSessionId: string | undefined): Promise<void> {
  await tenant(userId).put({ ...keys.sessionGate(userId), validAfterMs, keepSessionId, updatedAt: new Date(validAfterMs).toISOString() });
}
