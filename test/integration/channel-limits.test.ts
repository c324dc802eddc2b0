import { describe, expect, it } from 'vitest';
import { PLANS } from '#domain/billing/plans';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { testSession } from '../helpers/api';
import { subscribe } from './agents-helpers';
import { TOKENS, useChannelsBed } from './channels-helpers';

const { bed, skill, skillOk } = useChannelsBed();

const CONNECTS = {
  'chat-bot': { action: 'connect', token: TOKENS.telegram, defaultTarget: '555' },
  'community-bot': { action: 'connect', token: TOKENS.discord, defaultTarget: '1098765432109876543' },
  'business-messaging': { action: 'connect', token: TOKENS.whatsapp, phoneNumberId: '106540352242922', defaultTarget: '447700900123' },
  'team-chat': { action: 'connect', token: TOKENS.slack, defaultTarget: 'C0123456789' },
} as const;

async function account(plan: string) {
  const session = await testSession();
  await subscribe(session.userId, plan);
  return session;
}

const today = () => new Date().toISOString().slice(0, 10);

describe('per-plan channel limits', () => {
  it('the plan catalogue names a connection limit and a daily message limit for every plan, growing with the plan', () => {
    const plans = [PLANS.label, PLANS.solo, PLANS.collective, PLANS.network];
    expect(plans.map((p) => [p.channelConnections, p.channelMessagesPerDay])).toEqual([
      [1, 100],
      [2, 500],
      [3, 2000],
      [4, 10000],
    ]);
  });

  it('label connects one messaging app: a second app is 429 CHANNEL_LIMIT, a reconnect of the first is not a new one', async () => {
    const session = await account('label');
    await skillOk(session, 'chat-bot', CONNECTS['chat-bot']);
    const second = await skill(session, 'team-chat', CONNECTS['team-chat']);
    expect([second.status, second.body]).toEqual([429, expect.objectContaining({ code: 'CHANNEL_LIMIT', current: 1, limit: 1 })]);
    // Nothing of the refused app was stored: it still has no connection to send with.
    expect((await skill(session, 'team-chat', { action: 'send', to: 'C1', text: 'x' })).body.code).toBe('CHANNEL_NOT_CONNECTED');
    expect((await skillOk(session, 'chat-bot', { action: 'connect', defaultTarget: '556' })).reconnected).toBe(true);
    // The two WhatsApp skills share one app, so one connection.
    const solo = await account('solo');
    await skillOk(solo, 'business-messaging', CONNECTS['business-messaging']);
    await skillOk(solo, 'business-messaging-api', { action: 'connect', businessAccountId: '102290129340398' });
    await skillOk(solo, 'chat-bot', CONNECTS['chat-bot']);
    expect((await skill(solo, 'community-bot', CONNECTS['community-bot'])).body).toMatchObject({ code: 'CHANNEL_LIMIT', current: 2, limit: 2 });
  });

  it('racing connects of four apps on label: exactly one is stored', async () => {
    const session = await account('label');
    const results = await Promise.all(Object.entries(CONNECTS).map(([name, body]) => skill(session, name, body)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 200).every((r) => r.status === 429 && r.body.code === 'CHANNEL_LIMIT')).toBe(true);
    expect(await tenant(session.userId).get(keys.channelCount(session.userId), true)).toMatchObject({ connected: 1 });
  });

  it("sends up to the plan's messages a day, then 429 CHANNEL_DAILY_LIMIT; racing sends stop at the limit; a failed send gives its place back", async () => {
    const session = await account('label');
    await skillOk(session, 'chat-bot', CONNECTS['chat-bot']);
    const store = tenant(session.userId);
    // 99 of label's 100 already sent today.
    await store.put({ ...keys.channelDay(session.userId, today()), sent: 99 });
    const before = bed.fake.calls.length;
    await skillOk(session, 'chat-bot', { action: 'send', text: 'the hundredth' });
    const over = await skill(session, 'chat-bot', { action: 'send', text: 'one too many' });
    expect([over.status, over.body]).toEqual([429, expect.objectContaining({ code: 'CHANNEL_DAILY_LIMIT', current: 100, limit: 100 })]);
    expect(bed.fake.calls.length - before).toBe(1);

    await store.put({ ...keys.channelDay(session.userId, today()), sent: 97 });
    const racing = await Promise.all(Array.from({ length: 5 }, (_, i) => skill(session, 'chat-bot', { action: 'send', text: `race ${i}` })));
    expect(racing.filter((r) => r.status === 200)).toHaveLength(3);
    expect(racing.filter((r) => r.status === 429)).toHaveLength(2);
    expect(await store.get(keys.channelDay(session.userId, today()), true)).toMatchObject({ sent: 100 });

    // A send the app refuses is not counted.
    const other = await account('label');
    // Discord takes the token at connect without a call; the first send finds it revoked.
    await skillOk(other, 'community-bot', { ...CONNECTS['community-bot'], token: 'revoked-discord-bot-token' });
    await tenant(other.userId).put({ ...keys.channelDay(other.userId, today()), sent: 99 });
    const refused = await skill(other, 'community-bot', { action: 'send', text: 'x' });
    expect([refused.status, refused.body.code]).toEqual([502, 'CHANNEL_ERROR']);
    expect(await tenant(other.userId).get(keys.channelDay(other.userId, today()), true)).toMatchObject({ sent: 99 });
  });
});
