import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../client';
import * as keys from '../keys';
import type { Key } from '../keys';
import { queryEvery } from '../tenant';

/**
 * The venue and festival catalogues venue-finder and festival-finder search: global partitions the
 * operator fills through the admin import routes, one item per entry keyed by its id.
 */

type Entry = { id: string } & Record<string, unknown>;

async function importInto<T extends Entry>(partition: string, keyOf: (id: string) => Key, entries: T[], replace: boolean) {
  const existing = replace ? await readAll<T>(partition) : [];
  const incoming = new Set(entries.map((e) => e.id));
  const stale = existing.filter((e) => !incoming.has(e.id));
  await Promise.all([
    ...entries.map((e) => db().send(new PutCommand({ TableName: tableName(), Item: { ...keyOf(e.id), ...e } }))),
    ...stale.map((e) => db().send(new DeleteCommand({ TableName: tableName(), Key: keyOf(e.id) }))),
  ]);
  return { imported: entries.length, removed: stale.length };
}

async function readAll<T extends Entry>(partition: string): Promise<T[]> {
  const items = await queryEvery<T & Key>({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': partition } });
  return items.map(({ pk: _pk, sk: _sk, ...entry }) => entry as unknown as T);
}

export const importVenues = <T extends Entry>(venues: T[], replace: boolean) => importInto(keys.venuePartition, keys.venueEntry, venues, replace);
export const importFestivals = <T extends Entry>(festivals: T[], replace: boolean) =>
  importInto(keys.festivalPartition, keys.festivalEntry, festivals, replace);
export const listVenues = <T extends Entry>() => readAll<T>(keys.venuePartition);
export const listFestivals = <T extends Entry>() => readAll<T>(keys.festivalPartition);
