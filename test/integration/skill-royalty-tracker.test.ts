import { describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/royalty-tracker';
import * as keys from '#data/keys';
import { readSummaryRecords } from '#data/metrics';
import { tenant } from '#data/tenant';
import { newTestUserId, runSkill } from '../helpers/skill-call';

const STATEMENTS = [
  { reference: 'sp-1', period: '2026-05', source: 'Spotify', release: 'Midnight Drive', amount: '12.345678' },
  { reference: 'ap-1', period: '2026-05', source: 'Apple', release: 'Midnight Drive', amount: '0.000322' },
  { reference: 'sp-2', period: '2026-05', source: 'Spotify', release: 'Night Bus', amount: '0.1' },
  { reference: 'sp-3', period: '2026-06', source: 'Spotify', release: 'Midnight Drive', amount: '100.5' },
  { reference: 'bc-1', period: '2026-06', source: 'Bandcamp', release: 'Night Bus', amount: '-2.25' },
  { reference: 'ap-2', period: '2026-06', source: 'Apple', release: 'Night Bus', amount: '0.004999' },
];

const revenueMonth = async (userId: string, month: string) =>
  tenant(userId).get<{ amountCents?: number; royaltyMicros?: string }>(keys.revenueMonth(userId, month), true);

describe('royalty-tracker', () => {
  it('totals imported statements exactly (hand-worked figures) and writes the monthly revenue records', async () => {
    const userId = newTestUserId();
    const imported = await runSkill(skill, userId, { action: 'import_statements', statements: STATEMENTS });
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({ imported: 6, batchTotal: '110.700999' });

    const res = await runSkill(skill, userId, { action: 'total' });
    expect(res.status).toBe(200);
    // 12.345678 + 0.000322 + 0.1 + 100.5 - 2.25 + 0.004999 = 110.700999
    expect(res.body).toMatchObject({ success: true, total: '110.700999', totalRounded: '110.70', currency: 'USD', statements: 6 });
    expect(res.body.byMonth).toEqual([
      { month: '2026-05', total: '12.446000' },
      { month: '2026-06', total: '98.254999' },
    ]);
    expect(res.body.bySource).toEqual([
      { source: 'Apple', total: '0.005321' },
      { source: 'Bandcamp', total: '-2.250000' },
      { source: 'Spotify', total: '112.945678' },
    ]);
    expect(res.body.byRelease).toEqual([
      { release: 'Midnight Drive', total: '112.846000' },
      { release: 'Night Bus', total: '-2.145001' },
    ]);
    // Month records in cents: 12.446 → 1245, 98.254999 → 9825.
    const summary = await readSummaryRecords(userId);
    expect(summary.revenue.sort((a, b) => a.month.localeCompare(b.month))).toEqual([
      { month: '2026-05', amountCents: 1245 },
      { month: '2026-06', amountCents: 9825 },
    ]);
  });

  it("keeps the month's cents equal to the rounded exact sum across imports, on top of other revenue writers", async () => {
    const userId = newTestUserId();
    await tenant(userId).put({ ...keys.revenueMonth(userId, '2026-05'), amountCents: 10_000 });
    await runSkill(skill, userId, { action: 'import_statements', statements: [STATEMENTS[0]!, STATEMENTS[1]!, STATEMENTS[2]!] });
    expect((await revenueMonth(userId, '2026-05'))?.amountCents).toBe(11_245);
    // 12.446 + 0.004 = 12.450: still 1245 cents.
    await runSkill(skill, userId, { action: 'import_statements', statements: [{ period: '2026-05', source: 'Tidal', amount: '0.004' }] });
    expect((await revenueMonth(userId, '2026-05'))?.amountCents).toBe(11_245);
    // + 0.005 = 12.455: rounds up to 1246 cents.
    await runSkill(skill, userId, { action: 'import_statements', statements: [{ period: '2026-05', source: 'Tidal', amount: '0.005' }] });
    expect(await revenueMonth(userId, '2026-05')).toMatchObject({ amountCents: 11_246, royaltyMicros: '12455000' });
  });

  it('concurrent imports into one month lose nothing', async () => {
    const userId = newTestUserId();
    await Promise.all(
      Array.from({ length: 5 }, () =>
        runSkill(skill, userId, { action: 'import_statements', statements: [{ period: '2026-04', source: 'Spotify', amount: '0.333333' }] }),
      ),
    );
    expect((await runSkill(skill, userId, { action: 'total' })).body.total).toBe('1.666665');
    expect(await revenueMonth(userId, '2026-04')).toMatchObject({ amountCents: 167, royaltyMicros: '1666665' });
  });

  it('a statement reference imports once: the repeat answers 409 and changes nothing', async () => {
    const userId = newTestUserId();
    await runSkill(skill, userId, { action: 'import_statements', statements: [STATEMENTS[0]!] });
    const again = await runSkill(skill, userId, { action: 'import_statements', statements: [STATEMENTS[3]!, STATEMENTS[0]!] });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'DUPLICATE_STATEMENT', references: ['sp-1'] });
    const total = await runSkill(skill, userId, { action: 'total' });
    expect(total.body).toMatchObject({ total: '12.345678', statements: 1 });
    expect(await revenueMonth(userId, '2026-06')).toBeUndefined();
  });

  it('an empty account totals zero, and another user sees none of the statements', async () => {
    const owner = newTestUserId();
    await runSkill(skill, owner, { action: 'import_statements', statements: STATEMENTS });
    const res = await runSkill(skill, newTestUserId(), { action: 'total' });
    expect(res.body).toEqual({
      success: true,
      total: '0.000000',
      totalRounded: '0.00',
      currency: 'USD',
      statements: 0,
      byMonth: [],
      bySource: [],
      byRelease: [],
    });
  });

  it('refuses an invalid body for each action with 400 and the issues', async () => {
    const userId = newTestUserId();
    const bad = [
      { action: 'total', from: '2026-01' },
      { action: 'import_statements', statements: [] },
      { action: 'import_statements', statements: [{ period: '2026-13', source: 'X', amount: '1' }] },
      { action: 'import_statements', statements: [{ period: '2026-01', source: 'X', amount: '1.0000001' }] },
      { action: 'import_statements', statements: [{ period: '2026-01', source: 'X', amount: 12.5 }] },
      { action: 'import_statements', statements: [{ period: '2026-01', source: 'X', amount: '1', currency: 'EUR' }] },
      { action: 'import_statements', statements: Array.from({ length: 51 }, () => ({ period: '2026-01', source: 'X', amount: '1' })) },
    ];
    for (const body of bad) {
      const res = await runSkill(skill, userId, body);
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(400);
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
    expect((await runSkill(skill, userId, { action: 'total' })).body.statements).toBe(0);
  });
});
