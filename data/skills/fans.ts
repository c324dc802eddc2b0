import { createHash, randomBytes } from 'node:crypto';
import * as keys from '../keys';
import { ConditionFailedError, tenant } from '../tenant';

/**
 * Fans of groupie-manager at `USER#<id> / FAN#<fanId>` (the metrics summary reads `segment`,
 * `createdAt` and `lastActiveAt` from the same items). A fan with an email (else a handle) has an
 * id derived from it, so adding or importing the same person again updates one record.
 */
export type FanSegment = 'superfan' | 'casual' | 'new';

export interface FanInput {
  name: string;
  email?: string;
  handle?: string;
  firstSeenAt: string;
  lastActiveAt?: string;
  purchases: number;
  spendCents: number;
  streams: number;
}

export interface FanRecord extends FanInput, Record<string, unknown> {
  fanId: string;
  segment: FanSegment;
  createdAt: string;
  updatedAt: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

export function fanIdFor(input: Pick<FanInput, 'email' | 'handle'>): string {
  if (input.email) return `fan_${digest(`email:${input.email.trim().toLowerCase()}`)}`;
  if (input.handle) return `fan_${digest(`handle:${input.handle.trim().toLowerCase()}`)}`;
  return `fan_${randomBytes(16).toString('hex')}`;
}

/** Creates or updates the fan; the first store keeps its `createdAt`. */
export async function upsertFan(userId: string, fanId: string, fan: FanInput, segment: FanSegment, now: Date): Promise<FanRecord> {
  const fields: Record<string, unknown> = { fanId, ...fan, segment, updatedAt: now.toISOString() };
  const present = Object.entries(fields).filter(([, v]) => v !== undefined);
  const removed = (['email', 'handle', 'lastActiveAt'] as const).filter((f) => fan[f] === undefined);
  const names: Record<string, string> = { '#createdAt': 'createdAt' };
  const values: Record<string, unknown> = { ':now': now.toISOString() };
  const sets = present.map(([f, v], i) => {
    names[`#f${i}`] = f;
    values[`:f${i}`] = v;
    return `#f${i} = :f${i}`;
  });
  removed.forEach((f, i) => {
    names[`#r${i}`] = f;
  });
  const expression =
    `SET ${[...sets, '#createdAt = if_not_exists(#createdAt, :now)'].join(', ')}` +
    (removed.length ? ` REMOVE ${removed.map((_, i) => `#r${i}`).join(', ')}` : '');
  return tenant(userId).update<FanRecord>(keys.fan(userId, fanId), { expression, names, values });
}

export const listFans = (userId: string) => tenant(userId).queryAll<FanRecord>(keys.fanPrefix, { consistent: true });

/** Stores a recomputed segment, unless the fan was deleted meanwhile. */
export async function setFanSegment(userId: string, fanId: string, segment: FanSegment): Promise<boolean> {
  try {
    await tenant(userId).update(
      keys.fan(userId, fanId),
      { expression: 'SET #segment = :segment', names: { '#segment': 'segment' }, values: { ':segment': segment } },
      { expression: 'attribute_exists(pk)' },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}
