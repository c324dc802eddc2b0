import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#platform/config';
import { db, tableName } from './client';
import * as keys from './keys';

/**
 * Whether the table answers: one consistent-read-free GetItem of a fixed key, bounded by the
 * client's own time budget. The outcome is kept for `healthProbeCacheMs` so that a flood of health
 * checks costs one read per container per few seconds, not one each.
 */
let last: { at: number; ok: boolean } | undefined;

export async function databaseAnswers(now = Date.now()): Promise<boolean> {
  if (last && now - last.at < config().healthProbeCacheMs) return last.ok;
  let ok: boolean;
  try {
    await db().send(new GetCommand({ TableName: tableName(), Key: keys.healthProbe() }));
    ok = true;
  } catch {
    ok = false;
  }
  last = { at: now, ok };
  return ok;
}
