import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/email';
import { readOutbox } from '#adapters/email';
import { EMAIL_DAILY_LIMITS } from '#contract/skill-actions/payments';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { call, testSession } from '../helpers/api';
import { newTestUserId, runSkill } from '../helpers/skill-call';

const subscribe = (userId: string, plan: string) =>
  tenant(userId).put({ ...keys.subscription(userId), status: 'active', plan, eventCreated: Date.now(), updatedAt: new Date().toISOString() });

const address = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;

describe('email skill', () => {
  it('sends one message per recipient to the outbox, with an audit record each', async () => {
    const userId = newTestUserId();
    await subscribe(userId, 'solo');
    const [a, b] = [address('promoter'), address('agent')];
    const res = await runSkill(skill, userId, { action: 'send', to: [a, b, a.toUpperCase()], subject: 'Hold for 12 July', body: 'Can we confirm the hold?' });
    expect(res.status).toBe(200);
    expect(res.body.sent).toBe(2);
    expect(res.body.messages.map((m: any) => [m.to, m.status])).toEqual([
      [a, 'sent'],
      [b, 'sent'],
    ]);
    const delivered = await readOutbox(a);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ to: a, subject: 'Hold for 12 July', text: 'Can we confirm the hold?' });
    const listed = await runSkill(skill, userId, { action: 'list' });
    expect(listed.body.count).toBe(2);
    expect(listed.body.messages.every((m: any) => m.status === 'sent' && m.subject === 'Hold for 12 July')).toBe(true);
    expect((await runSkill(skill, userId, { action: 'usage' })).body).toMatchObject({ plan: 'solo', limit: 200, sentToday: 2, remaining: 198 });
  });

  it('keeps the per-plan daily limit (label: 50), also for concurrent sends', async () => {
    const userId = newTestUserId();
    await subscribe(userId, 'label');
    expect(EMAIL_DAILY_LIMITS.label).toBe(50);
    const ten = (tag: string) => Array.from({ length: 10 }, (_, i) => address(`${tag}${i}`));
    const batches = await Promise.all(
      Array.from({ length: 6 }, (_, i) => runSkill(skill, userId, { action: 'send', to: ten(`b${i}`), subject: 'Tour', body: 'Dates inside.' })),
    );
    expect(batches.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = batches.find((r) => r.status === 429)!;
    expect(refused.body).toMatchObject({ code: 'EMAIL_DAILY_LIMIT', limit: 50, sentToday: 50 });
    expect((await runSkill(skill, userId, { action: 'usage' })).body).toMatchObject({ sentToday: 50, remaining: 0 });
    expect((await runSkill(skill, userId, { action: 'list', limit: 100 })).body.count).toBe(50);
    // The next UTC day starts again.
    const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
    expect((await runSkill(skill, userId, { action: 'send', to: address('next'), subject: 'Tour', body: 'x' }, { now: tomorrow })).status).toBe(200);
  });

  it('validates recipients and bodies per action; an empty account lists nothing', async () => {
    const userId = newTestUserId();
    const bad: Record<string, unknown>[] = [
      { action: 'send', to: 'not-an-address', subject: 's', body: 'b' },
      { action: 'send', to: [], subject: 's', body: 'b' },
      { action: 'send', to: Array.from({ length: 11 }, (_, i) => `x${i}@example.com`), subject: 's', body: 'b' },
      { action: 'send', to: 'a@example.com', subject: 'line\r\nBcc: victim@example.com', body: 'b' },
      { action: 'send', to: 'a@example.com', subject: 's' },
      { action: 'list', limit: 0 },
      { action: 'usage', plan: 'network' },
    ];
    for (const body of bad) {
      const res = await runSkill(skill, userId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
    expect((await runSkill(skill, userId, { action: 'list' })).body).toMatchObject({ messages: [], count: 0 });
  });

  it('an Idempotency-Key retry over HTTP sends the message once', async () => {
    const session = await testSession();
    await subscribe(session.userId, 'solo');
    const to = address('retry');
    const opts = { session, body: { action: 'send', to, subject: 'Once', body: 'only once' }, headers: { 'idempotency-key': randomUUID() } };
    expect((await call('POST', '/api/skills/email', opts)).status).toBe(200);
    const again = await call('POST', '/api/skills/email', opts);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await readOutbox(to)).toHaveLength(1);
  });
});
