import { describe, expect, it } from 'vitest';
import { callSkill, expectRefused, skillOk, skillUser } from './skills-helpers';

const later = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

describe('event-scheduler skill', () => {
  it('stores posts at their UTC time, lists them soonest first and cancels one', async () => {
    const user = await skillUser();
    const far = await skillOk(user, 'event-scheduler', {
      action: 'schedule',
      title: 'Launch',
      date: later(20),
      time: '20:30',
      channels: ['chatBot', 'communityBot'],
    });
    expect(far.post).toMatchObject({ title: 'Launch', status: 'scheduled', scheduledFor: `${later(20)}T20:30:00.000Z`, channels: ['chatBot', 'communityBot'] });
    expect(far.delivery).toContain('heartbeat worker');
    const near = await skillOk(user, 'event-scheduler', { action: 'schedule', title: 'Reminder', date: later(2), time: '09:00', channels: ['teamChat'] });
    expect((await skillOk(user, 'event-scheduler', { action: 'list' })).posts.map((p: { title: string }) => p.title)).toEqual(['Reminder', 'Launch']);
    await skillOk(user, 'event-scheduler', { action: 'cancel', postId: near.post.postId });
    expect((await skillOk(user, 'event-scheduler', { action: 'list', status: 'scheduled' })).posts.map((p: { title: string }) => p.title)).toEqual(['Launch']);
    expect(
      (await callSkill(user, 'event-scheduler', { action: 'schedule', title: 'Old', date: '2020-01-01', time: '10:00', channels: ['chatBot'] })).body.code,
    ).toBe('TIME_IN_PAST');
  });

  it('keeps posts inside the account; an empty account lists nothing', async () => {
    const owner = await skillUser();
    const other = await skillUser();
    const { post } = await skillOk(owner, 'event-scheduler', { action: 'schedule', title: 'Mine', date: later(3), time: '10:00', channels: ['chatBot'] });
    expect((await skillOk(other, 'event-scheduler', { action: 'list' })).posts).toEqual([]);
    expect((await callSkill(other, 'event-scheduler', { action: 'cancel', postId: post.postId })).status).toBe(404);
  });

  it('refuses invalid bodies for each action', async () => {
    const user = await skillUser();
    await expectRefused(user, 'event-scheduler', [
      { action: 'schedule', title: 'x', date: later(3), time: '25:00', channels: ['chatBot'] },
      { action: 'schedule', title: 'x', date: later(3), time: '10:00', channels: [] },
      { action: 'schedule', title: 'x', date: later(3), time: '10:00', channels: ['fax'] },
      { action: 'list', status: 'sent' },
      { action: 'cancel' },
    ]);
  });
});
