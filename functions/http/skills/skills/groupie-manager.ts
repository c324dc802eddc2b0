import type * as z from 'zod/mini';
import { FanFields, groupieManagerBodies as bodies } from '#contract/skill-actions/groupie-manager';
import { fanIdFor, listFans, setFanSegment, upsertFan, type FanInput, type FanRecord, type FanSegment } from '#data/skills/fans';
import { action, type SkillCall, type SkillModule } from '#domain/skills/skill-module';

/**
 * Fan segmentation, the documented rules (evaluated in this order, `now` is the call's time):
 * 1. superfan: active within the last 90 days (`lastActiveAt`) AND at least one of
 *    3+ purchases, $100.00+ total spend, 500+ streams;
 * 2. new: first seen within the last 30 days (`firstSeenAt`);
 * 3. casual: everyone else.
 * A fan is segmented when stored and again by every `segment` call (time moves fans between segments).
 */
export const SEGMENT_RULES = {
  superfanActiveDays: 90,
  superfanMinPurchases: 3,
  superfanMinSpendCents: 100_00,
  superfanMinStreams: 500,
  newWithinDays: 30,
} as const;

const DAY_MS = 86_400_000;

export function segmentOf(fan: Pick<FanInput, 'firstSeenAt' | 'lastActiveAt' | 'purchases' | 'spendCents' | 'streams'>, now: Date): FanSegment {
  const r = SEGMENT_RULES;
  const activeRecently = !!fan.lastActiveAt && now.getTime() - Date.parse(fan.lastActiveAt) <= r.superfanActiveDays * DAY_MS;
  const engaged = fan.purchases >= r.superfanMinPurchases || fan.spendCents >= r.superfanMinSpendCents || fan.streams >= r.superfanMinStreams;
  if (activeRecently && engaged) return 'superfan';
  if (now.getTime() - Date.parse(fan.firstSeenAt) <= r.newWithinDays * DAY_MS) return 'new';
  return 'casual';
}

const RULES_TEXT = [
  `superfan: active within ${SEGMENT_RULES.superfanActiveDays} days and (${SEGMENT_RULES.superfanMinPurchases}+ purchases or $${SEGMENT_RULES.superfanMinSpendCents / 100}+ spend or ${SEGMENT_RULES.superfanMinStreams}+ streams)`,
  `new: first seen within ${SEGMENT_RULES.newWithinDays} days`,
  'casual: every other fan',
];

type FanFields = z.output<ReturnType<typeof FanFields>>;

const toInput = (f: FanFields, now: Date): FanInput => {
  const [whole, cents = ''] = f.spend.split('.');
  return {
    name: f.name,
    email: f.email?.toLowerCase(),
    handle: f.handle,
    firstSeenAt: new Date(f.firstSeenAt ?? now.toISOString()).toISOString(),
    lastActiveAt: f.lastActiveAt ? new Date(f.lastActiveAt).toISOString() : undefined,
    purchases: f.purchases,
    spendCents: Number(whole) * 100 + Number(cents.padEnd(2, '0')),
    streams: f.streams,
  };
};

const view = (f: FanRecord) => ({
  fanId: f.fanId,
  name: f.name,
  email: f.email ?? null,
  handle: f.handle ?? null,
  segment: f.segment,
  firstSeenAt: f.firstSeenAt,
  lastActiveAt: f.lastActiveAt ?? null,
  purchases: f.purchases,
  spend: (f.spendCents / 100).toFixed(2),
  streams: f.streams,
  createdAt: f.createdAt,
});

async function storeFan(call: SkillCall, fields: FanFields) {
  const input = toInput(fields, call.now);
  return upsertFan(call.userId, fanIdFor(input), input, segmentOf(input, call.now), call.now);
}

export const skill: SkillModule = {
  name: 'groupie-manager',
  defaultAction: 'segment',
  actions: {
    add_fan: action(bodies().add_fan, async (call, { action: _action, ...fields }) => ({ fan: view(await storeFan(call, fields)) })),
    import_fans: action(bodies().import_fans, async (call, body) => {
      const stored: FanRecord[] = [];
      // Small batches: a 200-fan import stays well inside the table's write capacity per partition.
      for (let i = 0; i < body.fans.length; i += 25) stored.push(...(await Promise.all(body.fans.slice(i, i + 25).map((f) => storeFan(call, f)))));
      const fanIds = new Set(stored.map((f) => f.fanId));
      return { imported: body.fans.length, fans: fanIds.size, segmentation: countSegments(stored.filter(uniqueBy())) };
    }),
    segment: action(bodies().segment, async (call) => {
      const fans = await listFans(call.userId);
      const segmented = await Promise.all(
        fans.map(async (fan) => {
          const segment = segmentOf(fan, call.now);
          if (segment !== fan.segment && !(await setFanSegment(call.userId, fan.fanId, segment))) return undefined;
          return { ...fan, segment };
        }),
      );
      const present = segmented.filter((f) => f !== undefined);
      const ids = (s: FanSegment) => present.filter((f) => f.segment === s).map((f) => ({ fanId: f.fanId, name: f.name }));
      return {
        total: present.length,
        segmentation: countSegments(present),
        segments: { superfans: ids('superfan'), casual: ids('casual'), new: ids('new') },
        rules: RULES_TEXT,
        segmentedAt: call.now.toISOString(),
      };
    }),
    list_fans: action(bodies().list_fans, async (call, body) => {
      const fans = (await listFans(call.userId)).filter((f) => !body.segment || f.segment === body.segment);
      return { fans: fans.map(view), count: fans.length };
    }),
  },
};

function countSegments(fans: { segment: FanSegment }[]) {
  const count = (s: FanSegment) => fans.filter((f) => f.segment === s).length;
  return { superfans: count('superfan'), casual: count('casual'), new: count('new') };
}

/** The last write of each fan in an import wins (the same email twice is one fan). */
function uniqueBy() {
  return (f: FanRecord, i: number, all: FanRecord[]) => all.findLastIndex((g) => g.fanId === f.fanId) === i;
}
