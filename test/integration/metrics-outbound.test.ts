import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skill as bookingSettlement } from '#functions/http/skills/skills/booking-settlement';
import { skill as chatBot } from '#functions/http/skills/skills/chat-bot';
import { skill as email } from '#functions/http/skills/skills/email';
import { skill as instantSplit } from '#functions/http/skills/skills/instant-split';
import { skill as usdcPayments } from '#functions/http/skills/skills/usdc-payments';
import { skill as webhook } from '#functions/http/skills/skills/webhook';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { call, subscribedSession } from '../helpers/api';
import { captureEvents } from '../helpers/event-queue';
import { startFakeChannels } from '../helpers/fake-channels';
import { startWebhookReceiver } from '../helpers/fake-webhook-receiver';
import { newRecipient, startPaymentsChain, type PaymentsChain } from '../helpers/payments-chain';
import { runSkill } from '../helpers/skill-call';

const TELEGRAM_TOKEN = '7412589630:AAHk3vQm9xZ2pLr8TnWc5yBd1FgE4sJuO6b';

let env: PaymentsChain;
let channels: Awaited<ReturnType<typeof startFakeChannels>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let events: Awaited<ReturnType<typeof captureEvents>>;

beforeAll(async () => {
  [env, channels, receiver, events] = await Promise.all([
    startPaymentsChain(),
    startFakeChannels({ telegram: TELEGRAM_TOKEN }),
    startWebhookReceiver(),
    captureEvents(),
  ]);
  reloadConfig({ ...channels.settings, FETCH_ALLOWED_LOOPBACK: new URL(receiver.url).host });
});
afterAll(async () => {
  reloadConfig({ ...Object.fromEntries(Object.keys(channels.settings).map((k) => [k, undefined])), FETCH_ALLOWED_LOOPBACK: undefined });
  await Promise.all([env.stop(), channels.close(), receiver.close(), events.stop()]);
});

const ok = async (module: Parameters<typeof runSkill>[0], userId: string, body: Record<string, unknown>) => {
  const res = await runSkill(module, userId, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

/** The summary's two outbound figures, recounted from the records each skill keeps. */
async function recount(userId: string) {
  const store = tenant(userId);
  const [transfers, legs, bookings, emails, channelMessages, webhookMessages] = await Promise.all([
    store.queryAll<{ status: string; amountMicros: number }>(keys.stablecoinTransferPrefix),
    store.queryAll<{ status: string; amount: string }>(keys.splitLegPrefix),
    store.queryAll<{ status: string }>(keys.bookingPrefix),
    store.queryAll<{ status: string }>(keys.emailAuditPrefix),
    store.queryAll<{ direction: string }>(keys.channelMessagePrefix('telegram')),
    store.queryAll(keys.webhookSkillMessage(userId, '').sk),
  ]);
  const confirmed = <T extends { status: string }>(list: T[]) => list.filter((x) => x.status === 'confirmed');
  return {
    transfers: confirmed(transfers).length,
    transferMicros: confirmed(transfers).reduce((n, t) => n + t.amountMicros, 0),
    splitPayments: confirmed(legs).length,
    splitMicros: confirmed(legs).reduce((n, l) => n + Math.round(Number(l.amount) * 1e6), 0),
    escrowReleases: bookings.filter((b) => b.status === 'completed').length,
    emails: emails.filter((e) => e.status === 'sent').length,
    channelMessages: channelMessages.filter((m) => m.direction === 'out').length,
    webhookMessages: webhookMessages.length,
  };
}

describe('GET /api/metrics/:userId/summary: money moved and messages sent', () => {
  it('counts confirmed transfers and split payments, released escrows, sent emails, channel and webhook messages, matching a recount', async () => {
    const session = await subscribedSession('solo');
    const { userId } = session;
    const summary = async () => {
      const res = await call('GET', `/api/metrics/${userId}/summary`, { session });
      expect(res.status, res.text).toBe(200);
      return res.body;
    };
    expect((await summary()).moneyMoved).toEqual({ month: '$0.00', total: '$0.00', transfers: 0, splitPayments: 0, escrowReleases: 0 });
    expect((await summary()).messagesSent).toEqual({ month: 0, total: 0, emails: 0, channelMessages: 0, webhookMessages: 0 });

    await env.fundedWallet(userId, 100_000_000n);
    env.chain.autoMine = false;
    const sent = await ok(usdcPayments, userId, { action: 'send', to: newRecipient(), amount: '12.5' });
    // Pending is not moved yet.
    await ok(usdcPayments, userId, { action: 'status', hash: sent.transfer.hash });
    expect((await summary()).moneyMoved.transfers).toBe(0);
    await env.chain.minePending();
    env.chain.autoMine = true;
    // Settled twice (status, then list): counted once.
    await ok(usdcPayments, userId, { action: 'status', hash: sent.transfer.hash });
    await ok(usdcPayments, userId, { action: 'list' });

    const { rule } = await ok(instantSplit, userId, {
      action: 'create_split_rule',
      splits: [
        { recipientAddress: newRecipient(), percentage: 60 },
        { recipientAddress: newRecipient(), percentage: 40 },
      ],
    });
    // Mined as sent: one call pays and settles both legs.
    const executed = await ok(instantSplit, userId, { action: 'execute_split', splitId: rule.splitId, amount: '10' });
    expect(executed.legs.map((l: { status: string }) => l.status)).toEqual(['confirmed', 'confirmed']);

    await ok(bookingSettlement, userId, { action: 'create_escrow', bookingId: 'show-1', booking: { guarantee: 1500, backend: 70, deposit: 500 } });
    await ok(bookingSettlement, userId, { action: 'release_funds', bookingId: 'show-1', netRevenue: 1000 });
    // An escrow never released moves nothing.
    await ok(bookingSettlement, userId, { action: 'create_escrow', bookingId: 'show-2', booking: { guarantee: 800, backend: 50, deposit: 200 } });

    await ok(email, userId, {
      action: 'send',
      to: [`a-${randomUUID()}@example.com`, `b-${randomUUID()}@example.com`],
      subject: 'Hold',
      body: 'Can we hold 12 July?',
    });
    await ok(chatBot, userId, { action: 'connect', token: TELEGRAM_TOKEN, defaultTarget: '555' });
    await ok(chatBot, userId, { action: 'send', text: 'Doors at 8' });
    await ok(chatBot, userId, { action: 'send', to: '556', text: 'Doors at 9' });
    const { endpoint } = await ok(webhook, userId, { action: 'register', url: receiver.url });
    await ok(webhook, userId, { action: 'send', endpointId: endpoint.endpointId, type: 'show.announced', payload: { city: 'Leeds' }, id: 'msg_metrics_1' });
    // A retried message id is not queued (or counted) twice.
    await ok(webhook, userId, { action: 'send', endpointId: endpoint.endpointId, type: 'show.announced', payload: { city: 'Leeds' }, id: 'msg_metrics_1' });

    const figures = await summary();
    // 12.50 sent + 10.00 split + 1,500.00 guarantee paid out (70% of 1,000 is less).
    expect(figures.moneyMoved).toEqual({ month: '$1,522.50', total: '$1,522.50', transfers: 1, splitPayments: 2, escrowReleases: 1 });
    expect(figures.messagesSent).toEqual({ month: 5, total: 5, emails: 2, channelMessages: 2, webhookMessages: 1 });
    const counted = await recount(userId);
    expect(counted).toEqual({
      transfers: figures.moneyMoved.transfers,
      transferMicros: 12_500_000,
      splitPayments: figures.moneyMoved.splitPayments,
      splitMicros: 10_000_000,
      escrowReleases: figures.moneyMoved.escrowReleases,
      emails: figures.messagesSent.emails,
      channelMessages: figures.messagesSent.channelMessages,
      webhookMessages: figures.messagesSent.webhookMessages,
    });
    // The escrow release is also a completed booking, as before.
    expect(figures.bookings).toMatchObject({ completed: 1, pending: 1 });
  });
});
