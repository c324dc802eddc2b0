import { randomBytes } from 'node:crypto';
import type { Key } from '../keys';
import { ConditionFailedError, tenant } from '../tenant';

/**
 * The few writes the record-keeping skills (calendar, notes, workspace) share: create once, change
 * or delete only what exists. "Missing" comes back as undefined; the skill answers 404.
 */
type Item = Record<string, unknown>;

export const newRecordId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

export async function createRecord(userId: string, key: Key, item: Item): Promise<void> {
  await tenant(userId).put({ ...key, ...item }, { expression: 'attribute_not_exists(pk)' });
}

export async function getRecord<T extends Item>(userId: string, key: Key): Promise<T | undefined> {
  return tenant(userId).get<T>(key, true);
}

/** Sets the given fields (undefined ones are left alone, null ones removed) on an existing record. */
export async function updateRecord<T extends Item>(userId: string, key: Key, fields: Item): Promise<T | undefined> {
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const removes: string[] = [];
  entries.forEach(([f, v], i) => {
    names[`#f${i}`] = f;
    if (v === null) removes.push(`#f${i}`);
    else {
      values[`:f${i}`] = v;
      sets.push(`#f${i} = :f${i}`);
    }
  });
  const expression = [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : ''].filter(Boolean).join(' ');
  try {
    return await tenant(userId).update<T>(
      key,
      { expression, names, values: Object.keys(values).length ? values : undefined },
      { expression: 'attribute_exists(pk)' },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}

export async function deleteRecord<T extends Item>(userId: string, key: Key): Promise<T | undefined> {
  try {
    return await tenant(userId).delete<T>(key, { expression: 'attribute_exists(pk)' });
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}

export const listRecords = <T extends Item>(userId: string, prefix: string) => tenant(userId).queryAll<T>(prefix, { consistent: true });
