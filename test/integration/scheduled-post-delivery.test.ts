import { describe, expect, it } from 'vitest';
import { deliverDuePosts } from '#functions/workers/heartbeat/scheduled-posts';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { TOKENS, useChannelsBed } from './channels-helpers';

const { bed, skillOk, provisionedUser, expectNoSecretLeaked } = useChannelsBed();

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000);
const dateOf = (d: Date) => d.toISOString().slice(0, 10);

describe('event-scheduler posts delivered when due (heartbeat worker)', () => {
  it('delivers a due post once on each channel, marks it delivered, and a retried or overlapping run sends nothing again', async () => {
    const { session } = await provisionedUser({ chatBotToken: TOKENS.telegram, communityBotToken: TOKENS.discord });
    await skillOk(session, 'chat-bot', { action: 'connect', defaultTarget: '777001' });
    await skillOk(session, 'community-bot', { action: 'connect', defaultTarget: '1098765432109876543' });
    const due = inDays(2);
    const { post } = await skillOk(session, 'event-scheduler', {
      action: 'schedule',
      title: 'Album launch',
      message: 'Tonight at 8',
      date: dateOf(due),
      time: '10:00',
      channels: ['chatBot', 'communityBot'],
    });
    const later = await skillOk(session, 'event-scheduler', {
      action: 'schedule',
      title: 'Later',
      date: dateOf(inDays(9)),
      time: '10:00',
      channels: ['chatBot'],
    });

    // Not due yet: nothing is sent.
    const sentBefore = bed.fake.calls.length;
    await deliverDuePosts(new Date());
    expect(bed.fake.calls.length).toBe(sentBefore);

    const at = new Date(`${dateOf(due)}T10:00:30.000Z`);
    const [first, overlapping] = await Promise.all([deliverDuePosts(at), deliverDuePosts(at)]);
    expect(first.delivered + overlapping.delivered).toBeGreaterThanOrEqual(1);
    const retry = await deliverDuePosts(new Date(at.getTime() + 60 * 60_000));
    expect(retry.delivered).toBe(0);

    const telegram = bed.fake.calls.filter((c) => c.app === 'telegram' && c.path.endsWith('/sendMessage'));
    const discord = bed.fake.calls.filter((c) => c.app === 'discord' && c.method === 'POST');
    expect(telegram.map((c) => c.body)).toEqual([{ chat_id: '777001', text: 'Album launch\n\nTonight at 8' }]);
    expect(discord.map((c) => [c.path, c.headers.authorization, c.body])).toEqual([
      ['/discord/channels/1098765432109876543/messages', `Bot ${TOKENS.discord}`, { content: 'Album launch\n\nTonight at 8' }],
    ]);

    const { posts } = await skillOk(session, 'event-scheduler', { action: 'list' });
    const delivered = posts.find((p: { postId: string }) => p.postId === post.postId);
    expect(delivered).toMatchObject({ status: 'delivered', deliveries: { chatBot: { status: 'delivered' }, communityBot: { status: 'delivered' } } });
    expect(posts.find((p: { postId: string }) => p.postId === later.post.postId).status).toBe('scheduled');
    // The sends are in the channels' records, tied to the post.
    const sent = await skillOk(session, 'chat-bot', { action: 'list_messages', direction: 'out' });
    expect(sent.messages).toEqual([expect.objectContaining({ postId: post.postId, conversation: '777001' })]);
    // Out of the due index once settled.
    const stored = await tenant(session.userId).queryAll<Record<string, unknown>>(keys.scheduledPostPrefix);
    expect(stored.find((p) => p.postId === post.postId)).not.toHaveProperty('gsi1pk');
  });

  it('a channel without a connection or default target fails with its reason; the others still go out', async () => {
    const { session } = await provisionedUser({ chatBotToken: TOKENS.telegram });
    await skillOk(session, 'chat-bot', { action: 'connect', defaultTarget: '888001' });
    const due = inDays(3);
    const { post } = await skillOk(session, 'event-scheduler', {
      action: 'schedule',
      title: 'Gig',
      date: dateOf(due),
      time: '12:00',
      channels: ['chatBot', 'teamChat'],
    });
    await deliverDuePosts(new Date(`${dateOf(due)}T12:00:00.000Z`));
    const { posts } = await skillOk(session, 'event-scheduler', { action: 'list', status: 'failed' });
    expect(posts.find((p: { postId: string }) => p.postId === post.postId)).toMatchObject({
      deliveries: { chatBot: { status: 'delivered' }, teamChat: { status: 'failed', error: expect.stringContaining('defaultTarget') } },
    });
    expect(bed.fake.calls.filter((c) => c.app === 'telegram' && c.body?.chat_id === '888001')).toHaveLength(1);
  });

  it('no answer or log line carries a token', () => expectNoSecretLeaked([TOKENS.telegram, TOKENS.discord]));
});
