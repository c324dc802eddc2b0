import { createHash, randomBytes } from 'node:crypto';
import { royaltyTrackerBodies as bodies } from '#contract/skill-actions/royalty-tracker';
import { importStatements, listStatements, type RoyaltyStatement } from '#data/skills/royalties';
import { conflict } from '#platform/errors';
import { fromMicros, microsToCents, toMicros } from '../decimal';
import { action, type SkillModule } from '#domain/skills/skill-module';

/**
 * Royalties from imported statements. Amounts are decimal strings (up to six fractional digits,
 * negative for adjustments) summed exactly; totals come back as exact decimal strings in USD.
 * A statement with a `reference` (the distributor's line id) can be imported once: importing it
 * again answers 409 and imports nothing of that batch.
 */
const statementId = (source: string, reference: string | undefined) =>
  reference
    ? `roy_${createHash('sha256').update(`${source.toLowerCase()}\n${reference}`).digest('hex').slice(0, 32)}`
    : `roy_${randomBytes(16).toString('hex')}`;

function sumBy(statements: RoyaltyStatement[], field: 'period' | 'source' | 'release') {
  const sums = new Map<string, bigint>();
  for (const s of statements) {
    const group = s[field];
    if (group !== undefined) sums.set(group, (sums.get(group) ?? 0n) + toMicros(s.amount));
  }
  return [...sums].sort(([a], [b]) => a.localeCompare(b)).map(([name, micros]) => ({ name, total: fromMicros(micros) }));
}

export const skill: SkillModule = {
  name: 'royalty-tracker',
  defaultAction: 'total',
  actions: {
    total: action(bodies().total, async (call) => {
      const statements = await listStatements(call.userId);
      const total = statements.reduce((n, s) => n + toMicros(s.amount), 0n);
      return {
        total: fromMicros(total),
        totalRounded: fromMicros(total, 2),
        currency: 'USD',
        statements: statements.length,
        byMonth: sumBy(statements, 'period').map(({ name, total }) => ({ month: name, total })),
        bySource: sumBy(statements, 'source').map(({ name, total }) => ({ source: name, total })),
        byRelease: sumBy(statements, 'release').map(({ name, total }) => ({ release: name, total })),
      };
    }),
    import_statements: action(bodies().import_statements, async (call, body) => {
      const importedAt = call.now.toISOString();
      const statements: RoyaltyStatement[] = body.statements.map((s) => ({ statementId: statementId(s.source, s.reference), ...s, importedAt }));
      const ids = new Set(statements.map((s) => s.statementId));
      if (ids.size !== statements.length) throw conflict('the same statement reference appears twice in this import', 'DUPLICATE_STATEMENT');
      const months = new Map<string, bigint>();
      for (const s of statements) months.set(s.period, (months.get(s.period) ?? 0n) + toMicros(s.amount));
      await importStatements(
        call.userId,
        statements,
        [...months].map(([month, micros]) => ({ month, micros })),
        microsToCents,
      );
      const batch = [...months.values()].reduce((n, m) => n + m, 0n);
      return { imported: statements.length, batchTotal: fromMicros(batch), statementIds: statements.map((s) => s.statementId) };
    }),
  },
};
