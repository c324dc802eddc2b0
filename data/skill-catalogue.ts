import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SKILL_CATALOGUE, SKILL_CATALOGUE_VERSION, type SkillCatalogueEntry } from '#contract/skills';
import { db, tableName } from './client';
import * as keys from './keys';
import { ConditionFailedError, queryEvery, tenant, transact, tx } from './tenant';

/**
 * The skill catalogue in DynamoDB (partition `SKILLCATALOGUE`), seeded from the versioned table in
 * contract/skills.ts. Each item holds the catalogue fields plus counters the platform keeps:
 * `downloads` (one per install, see installed-skills.ts) and `ratingSum` / `ratingCount`.
 */
export interface CatalogueSkill {
  id: string;
  name: string;
  description: string;
  category: SkillCatalogueEntry['category'];
  icon: string;
  author: string;
  downloads: number;
  rating: number;
  featured: boolean;
}

interface StoredSkill extends Record<string, unknown> {
  sk: string;
  name?: string;
  catalogueVersion?: number;
  downloads?: number;
  ratingSum?: number;
  ratingCount?: number;
}

/** Writes the catalogue fields of every entry, leaving the counters alone; then marks the version seeded. */
export async function seedCatalogue(version = SKILL_CATALOGUE_VERSION): Promise<void> {
  await Promise.all(
    SKILL_CATALOGUE.map((entry) =>
      db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.catalogueSkill(entry.name),
          UpdateExpression:
            'SET #name = :name, description = :description, category = :category, icon = :icon, author = :author, featured = :featured, catalogueVersion = :version',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: {
            ':name': entry.name,
            ':description': entry.description,
            ':category': entry.category,
            ':icon': entry.icon,
            ':author': entry.author,
            ':featured': entry.featured,
            ':version': version,
          },
        }),
      ),
    ),
  );
  await db()
    .send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.catalogueVersion,
        UpdateExpression: 'SET version = :version',
        ConditionExpression: 'attribute_not_exists(version) OR version < :version',
        ExpressionAttributeValues: { ':version': version },
      }),
    )
    .catch((err: { name?: string }) => {
      if (err?.name !== 'ConditionalCheckFailedException') throw err;
    });
}

const averageRating = (s: StoredSkill) => (s.ratingCount ? Math.round((Number(s.ratingSum ?? 0) / Number(s.ratingCount)) * 10) / 10 : 0);

/** The catalogue as `GET /api/skills` lists it, seeding it first when the stored version is older than the file's. */
export async function listCatalogue(): Promise<CatalogueSkill[]> {
  const read = () => queryEvery<StoredSkill>({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.cataloguePartition } });
  let items = await read();
  const version = Number(items.find((i) => i.sk === keys.catalogueVersion.sk)?.version ?? 0);
  if (version < SKILL_CATALOGUE_VERSION) {
    await seedCatalogue();
    items = await read();
  }
  const stored = new Map(items.map((i) => [i.sk, i]));
  // The file decides which skills exist and in what order; the table adds the counters.
  return SKILL_CATALOGUE.map((entry) => {
    const s = stored.get(keys.catalogueSkill(entry.name).sk) ?? ({ sk: '' } as StoredSkill);
    return {
      id: entry.name,
      name: entry.name,
      description: entry.description,
      category: entry.category,
      icon: entry.icon,
      author: entry.author,
      downloads: Math.max(0, Number(s.downloads ?? 0)),
      rating: averageRating(s),
      featured: entry.featured,
    };
  });
}

/**
 * Stores the user's rating (1-5) of a skill and keeps the catalogue's sum and count in step, in one
 * transaction: rating again replaces the earlier rating. Returns the skill's new average.
 */
export async function rateSkill(userId: string, skillId: string, rating: number, now = new Date()): Promise<{ rating: number; ratingCount: number }> {
  const key = keys.skillRating(userId, skillId);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const previous = await tenant(userId).get<{ rating: number }>(key, true);
    const mine = previous
      ? { expression: '#rating = :previous', names: { '#rating': 'rating' }, values: { ':previous': previous.rating } }
      : { expression: 'attribute_not_exists(pk)' };
    try {
      await transact([
        tx.put({ ...key, skillId, rating, ratedAt: now.toISOString() }, mine),
        tx.update(keys.catalogueSkill(skillId), {
          expression: 'ADD ratingSum :delta, ratingCount :added',
          values: { ':delta': rating - (previous?.rating ?? 0), ':added': previous ? 0 : 1 },
        }),
      ]);
      const skill = (
        await queryEvery<StoredSkill>({
          KeyConditionExpression: 'pk = :pk AND sk = :sk',
          ExpressionAttributeValues: { ':pk': keys.cataloguePartition, ':sk': keys.catalogueSkill(skillId).sk },
          ConsistentRead: true,
        })
      )[0];
      return { rating: skill ? averageRating(skill) : rating, ratingCount: Number(skill?.ratingCount ?? 1) };
    } catch (err) {
      // Another rating by the same user landed in between: read it again and redo the sums.
      if (!(err instanceof ConditionFailedError)) throw err;
    }
  }
  throw new ConditionFailedError('rating kept changing');
}
