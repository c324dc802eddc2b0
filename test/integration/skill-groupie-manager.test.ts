import { describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/groupie-manager';
import { readSummaryRecords } from '#data/metrics';
import { newTestUserId, runSkill } from '../helpers/skill-call';

const NOW = new Date('2026-06-15T00:00:00Z');
const at = (day: string) => `${day}T00:00:00Z`;

/** 20 fans; the expected segment of each was worked out by hand from the documented rules. */
const FANS = [
  { name: 'A', firstSeenAt: at('2025-01-01'), lastActiveAt: at('2026-06-01'), purchases: 3, expect: 'superfan' },
  { name: 'B', firstSeenAt: at('2025-01-01'), lastActiveAt: at('2026-06-01'), purchases: 2, spend: '99.99', streams: 499, expect: 'casual' },
  { name: 'C', firstSeenAt: at('2025-01-01'), lastActiveAt: at('2026-06-01'), spend: '100.00', expect: 'superfan' },
  { name: 'D', firstSeenAt: at('2025-01-01'), lastActiveAt: at('2026-06-01'), streams: 500, expect: 'superfan' },
  // Exactly 90 days before NOW: still active.
  { name: 'E', firstSeenAt: at('2025-01-01'), lastActiveAt: at('2026-03-17'), purchases: 10, expect: 'superfan' },
  // 91 days: no longer active, so engagement alone does not make a superfan.
  { name: 'F', firstSeenAt: at('2025-01-01'), lastActiveAt: at('2026-03-16'), purchases: 10, expect: 'casual' },
  { name: 'G', firstSeenAt: at('2025-01-01'), purchases: 10, expect: 'casual' },
  { name: 'H', firstSeenAt: at('2026-06-10'), expect: 'new' },
  // Exactly 30 days: still new; 31 days: casual.
  { name: 'I', firstSeenAt: at('2026-05-16'), expect: 'new' },
  { name: 'J', firstSeenAt: at('2026-05-15'), expect: 'casual' },
  // Superfan wins over new.
  { name: 'K', firstSeenAt: at('2026-06-01'), lastActiveAt: at('2026-06-14'), purchases: 4, expect: 'superfan' },
  { name: 'L', firstSeenAt: at('2026-06-01'), lastActiveAt: at('2026-06-14'), purchases: 1, expect: 'new' },
  { name: 'M', firstSeenAt: at('2024-06-01'), lastActiveAt: at('2026-06-14'), streams: 1200, expect: 'superfan' },
  { name: 'N', firstSeenAt: at('2024-06-01'), lastActiveAt: at('2026-06-14'), streams: 20, expect: 'casual' },
  { name: 'O', firstSeenAt: at('2026-06-14'), expect: 'new' },
  { name: 'P', firstSeenAt: at('2023-01-01'), lastActiveAt: at('2023-02-01'), spend: '5000', expect: 'casual' },
  { name: 'Q', firstSeenAt: at('2026-06-15'), expect: 'new' },
  { name: 'R', firstSeenAt: at('2025-12-01'), lastActiveAt: at('2026-06-10'), spend: '250.50', expect: 'superfan' },
  { name: 'S', firstSeenAt: at('2025-12-01'), lastActiveAt: at('2026-06-10'), purchases: 2, spend: '50', expect: 'casual' },
  { name: 'T', firstSeenAt: at('2026-05-20'), lastActiveAt: at('2026-06-12'), streams: 100, expect: 'new' },
] as const;

const asFans = () => FANS.map(({ expect: _e, ...f }) => ({ ...f, email: `${f.name.toLowerCase()}@fans.example.com` }));

describe('groupie-manager', () => {
  it('segments 20 stored fans exactly as worked out by hand, and the metrics summary sees the segments', async () => {
    const userId = newTestUserId();
    const imported = await runSkill(skill, userId, { action: 'import_fans', fans: asFans() }, { now: NOW });
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({ success: true, imported: 20, fans: 20, segmentation: { superfans: 7, casual: 7, new: 6 } });

    const res = await runSkill(skill, userId, { action: 'segment' }, { now: NOW });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(20);
    expect(res.body.segmentation).toEqual({ superfans: 7, casual: 7, new: 6 });
    const names = (list: { name: string }[]) => list.map((f) => f.name).sort();
    expect(names(res.body.segments.superfans)).toEqual(FANS.filter((f) => f.expect === 'superfan').map((f) => f.name));
    expect(names(res.body.segments.new)).toEqual(FANS.filter((f) => f.expect === 'new').map((f) => f.name));
    expect(names(res.body.segments.casual)).toEqual(FANS.filter((f) => f.expect === 'casual').map((f) => f.name));

    const summary = await readSummaryRecords(userId);
    expect(summary.fans).toHaveLength(20);
    expect(summary.fans.filter((f) => f.segment === 'superfan')).toHaveLength(7);
  });

  it('segment recomputes as time passes and stores the new segments', async () => {
    const userId = newTestUserId();
    await runSkill(skill, userId, { action: 'import_fans', fans: asFans() }, { now: NOW });
    // 100 days later nobody is new, and only fans active within 90 days of then stay superfans (none are).
    const later = new Date(NOW.getTime() + 100 * 86_400_000);
    const res = await runSkill(skill, userId, { action: 'segment' }, { now: later });
    expect(res.body.segmentation).toEqual({ superfans: 0, casual: 20, new: 0 });
    const listed = await runSkill(skill, userId, { action: 'list_fans', segment: 'casual' });
    expect(listed.body.count).toBe(20);
  });

  it('adding the same email again updates one fan and keeps its first createdAt', async () => {
    const userId = newTestUserId();
    const first = await runSkill(skill, userId, { action: 'add_fan', name: 'Ada', email: 'Ada@Example.com', firstSeenAt: at('2020-01-01') }, { now: NOW });
    expect(first.status).toBe(200);
    expect(first.body.fan).toMatchObject({ name: 'Ada', email: 'ada@example.com', segment: 'casual', spend: '0.00' });
    const again = await runSkill(
      skill,
      userId,
      {
        action: 'add_fan',
        name: 'Ada L.',
        email: 'ada@example.com',
        firstSeenAt: at('2020-01-01'),
        lastActiveAt: at('2026-06-14'),
        purchases: 3,
        spend: '12.5',
      },
      { now: new Date(NOW.getTime() + 1000) },
    );
    expect(again.body.fan).toMatchObject({
      fanId: first.body.fan.fanId,
      name: 'Ada L.',
      segment: 'superfan',
      spend: '12.50',
      createdAt: first.body.fan.createdAt,
    });
    expect((await runSkill(skill, userId, { action: 'list_fans' })).body.count).toBe(1);
  });

  it('an empty account segments to zero fans, never sample data', async () => {
    const res = await runSkill(skill, newTestUserId(), { action: 'segment' });
    expect(res.body).toMatchObject({
      success: true,
      total: 0,
      segmentation: { superfans: 0, casual: 0, new: 0 },
      segments: { superfans: [], casual: [], new: [] },
    });
    expect((await runSkill(skill, newTestUserId(), { action: 'list_fans' })).body).toEqual({ success: true, fans: [], count: 0 });
  });

  it("another user's fans are invisible", async () => {
    const owner = newTestUserId();
    await runSkill(skill, owner, { action: 'add_fan', name: 'Owner fan', email: 'x@example.com' });
    const intruder = await runSkill(skill, newTestUserId(), { action: 'segment' });
    expect(intruder.body.total).toBe(0);
  });

  it('refuses an invalid body for each action with 400 and the issues', async () => {
    const userId = newTestUserId();
    const bad = [
      { action: 'add_fan', email: 'no-name@example.com' },
      { action: 'add_fan', name: 'X', spend: '12.345' },
      { action: 'import_fans', fans: [] },
      { action: 'import_fans', fans: [{ name: 'X', plan: 'network' }] },
      { action: 'segment', userId: 'someone-else' },
      { action: 'list_fans', segment: 'vip' },
      { action: 'delete_everything' },
    ];
    for (const body of bad) {
      const res = await runSkill(skill, userId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
    expect((await runSkill(skill, userId, { action: 'list_fans' })).body.count).toBe(0);
  });
});
