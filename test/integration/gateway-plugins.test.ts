import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseUnits, type Hex } from 'viem';
import * as keys from '#data/keys';
import { getGlobal } from '#data/tenant';
import { readAgentMemory } from '#data/memory';
import { testSession } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { useFakeModelProviders } from '../helpers/model-providers';
import { putTestAgent } from '../security/route-samples';
import { readWhileModelIsSlow, sseFramesOf } from '../helpers/sse-timing';
import { startPlatform, subscribe } from './agents-helpers';
import { attributionMemo } from '#domain/payments/attribution';
import { challenge, credentialOf, gateway, PATH_USD, PRICE_UNITS, useGatewayChain } from './gateway-helpers';

/** The gateway end to end: paid on the local chain or by card, answered by the model layer through a fake provider. */
const models = useFakeModelProviders();
const bed = useGatewayChain();

/** Pays exactly the challenged price, in base units, with the challenge's memo. */
const paid = async (plugin = 'generate-text') => {
  const { nonce, amount, memo } = await challenge(plugin);
  return { nonce, memo, hash: await bed.chain.transferWithMemo(bed.payer, PATH_USD, bed.recipient, parseUnits(amount, 6), memo) };
};
const asPayment = (hash: Hex, nonce: string) => ({ authorization: `Payment ${credentialOf(hash, nonce)}` });
const requestsFor = (prompt: string) => models.model.requests.filter((r) => JSON.stringify(r.body.messages).includes(prompt));

describe('MPP-paid calls', () => {
  it('a valid payment gets the plugin answer with a Payment-Receipt; a replay gets 402', async () => {
    const { nonce, hash } = await paid();
    const prompt = `hello ${randomUUID()}`;
    const res = await gateway({ prompt }, { headers: asPayment(hash, nonce) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      plugin: 'generate-text',
      message: fakeAnswerTo(prompt),
      timestamp: expect.any(String),
      payment: { method: 'mpp', receipt: hash },
    });
    expect(res.headers['x-plugin-id']).toBe('generate-text');
    const receipt = JSON.parse(Buffer.from(res.headers['payment-receipt']!, 'base64url').toString());
    expect(receipt).toMatchObject({ status: 'success', method: 'tempo', reference: hash });
    expect(res.headers['cache-control']).toContain('private');

    const replay = await gateway({ prompt }, { headers: asPayment(hash, nonce) });
    expect(replay.status).toBe(402);
    expect(replay.body.code).toBe('ALREADY_USED');
    expect(requestsFor(prompt)).toHaveLength(1);
  });

  it('20 parallel copies of one credential: exactly one 200 and one model call', async () => {
    const { nonce, hash } = await paid();
    const prompt = `parallel ${randomUUID()}`;
    const all = await Promise.all(Array.from({ length: 20 }, () => gateway({ prompt }, { headers: asPayment(hash, nonce) })));
    expect(all.filter((r) => r.status === 200)).toHaveLength(1);
    expect(all.filter((r) => r.status === 402 && r.body.code === 'ALREADY_USED')).toHaveLength(19);
    expect(requestsFor(prompt)).toHaveLength(1);
  });

  it('a plugin failure after payment keeps the credential redeemable; the retry is served once', async () => {
    const { nonce, hash } = await paid();
    const prompt = `retry ${randomUUID()}`;
    models.model.failWith = 500;
    try {
      const failed = await gateway({ prompt }, { headers: asPayment(hash, nonce) });
      expect(failed.status).toBe(500);
      expect(failed.body).toMatchObject({ error: 'internal', code: 'PROVIDER_ERROR' });
      expect(failed.headers['payment-receipt']).toBeUndefined();
    } finally {
      models.model.failWith = undefined;
    }
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'paid', txHash: hash });
    const retried = await gateway({ prompt }, { headers: asPayment(hash, nonce) });
    expect(retried.status).toBe(200);
    expect(retried.body.message).toBe(fakeAnswerTo(prompt));
    const again = await gateway({ prompt }, { headers: asPayment(hash, nonce) });
    expect(again.status).toBe(402);
    expect(again.body.code).toBe('ALREADY_USED');
  });

  it('streams generate-text as server-sent events when asked', async () => {
    const { nonce, hash } = await paid();
    const prompt = `stream ${randomUUID()}`;
    const res = await gateway({ prompt }, { headers: { ...asPayment(hash, nonce), accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.headers['payment-receipt']).toBeDefined();
    const events = res
      .text!.trim()
      .split('\n\n')
      .map((block) => {
        const [event, data] = block.split('\n');
        return { event: event!.replace('event: ', ''), data: JSON.parse(data!.replace('data: ', '')) };
      });
    const deltas = events.filter((e) => e.event === 'delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.data.text).join('')).toBe(fakeAnswerTo(prompt));
    expect(events.at(-1)).toMatchObject({
      event: 'done',
      data: { plugin: 'generate-text', message: fakeAnswerTo(prompt), payment: { method: 'mpp', receipt: hash } },
    });
    expect(models.model.requests.at(-1)!.body.stream).toBe(true);
  });

  it('over a real HTTP connection the first delta reaches the client before the model sent its last chunk', async () => {
    const { nonce, hash } = await paid();
    const prompt = `live ${randomUUID()}`;
    const platform = await startPlatform();
    try {
      const { res, frames, firstDeltaAt, lastChunkSentAt } = await readWhileModelIsSlow(models.model, `${platform.url}/api/v1/gateway`, {
        method: 'POST',
        headers: { ...asPayment(hash, nonce), 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ prompt }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('payment-receipt')).toBeTruthy();
      expect(firstDeltaAt).toBeDefined();
      expect(lastChunkSentAt).toBeDefined();
      expect(firstDeltaAt!).toBeLessThan(lastChunkSentAt!);
      expect(
        frames
          .filter((f) => f.event === 'delta')
          .map((f) => f.data.text)
          .join(''),
      ).toBe(fakeAnswerTo(prompt));
      expect(frames.at(-1)).toMatchObject({ event: 'done', data: { message: fakeAnswerTo(prompt), payment: { method: 'mpp', receipt: hash } } });
    } finally {
      await platform.close();
    }
  });

  it('a stream that fails before its first chunk leaves the payment redeemable; one that breaks mid-stream is served and spent', async () => {
    const { nonce, hash } = await paid();
    const prompt = `stream retry ${randomUUID()}`;
    const streamed = { headers: { ...asPayment(hash, nonce), accept: 'text/event-stream' } };
    models.model.failWith = 500;
    try {
      const failed = await gateway({ prompt }, streamed);
      expect(failed.status).toBe(500);
      expect(failed.body).toMatchObject({ error: 'internal', code: 'PROVIDER_ERROR' });
    } finally {
      models.model.failWith = undefined;
    }
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'paid', txHash: hash });

    models.model.beforeLastChunk = () => Promise.reject(new Error('connection lost'));
    try {
      const broken = await gateway({ prompt }, streamed);
      expect(broken.status).toBe(200);
      const frames = sseFramesOf(broken.text!);
      expect(frames[0]!.event).toBe('delta');
      expect(frames.at(-1)).toMatchObject({ event: 'error', data: { error: 'internal', code: expect.any(String) } });
      expect(frames.some((f) => f.event === 'done')).toBe(false);
    } finally {
      models.model.beforeLastChunk = undefined;
    }
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'served' });
    const again = await gateway({ prompt }, streamed);
    expect(again.status).toBe(402);
    expect(again.body.code).toBe('ALREADY_USED');
  });

  it('agent: several model steps with account-free tools only for a payer', async () => {
    const { nonce, hash } = await paid('agent');
    const prompt = `agent ${randomUUID()}`;
    models.model.toolCall = { name: 'current_time', input: {} };
    try {
      const res = await gateway({ plugin: 'agent', prompt }, { headers: asPayment(hash, nonce) });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ plugin: 'agent', message: fakeAnswerTo(prompt), steps: 2 });
      const toolNames = (models.model.requests.at(-1)!.body.tools as { function?: { name: string }; name?: string }[]).map((t) => t.function?.name ?? t.name);
      expect(toolNames).toEqual(['current_time']);
    } finally {
      models.model.toolCall = undefined;
    }
  });

  it('refuses a bad plugin input with 400 before any payment is spent', async () => {
    const { nonce, hash } = await paid();
    const res = await gateway({ prompt: undefined, messages: [] }, { headers: asPayment(hash, nonce) });
    expect(res.status).toBe(400);
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'open' });
  });
});

describe('a payment pays only the challenge it is bound to', () => {
  /** The call is refused with a fresh challenge, nothing reaches the model, and the hash stays unspent. */
  async function refusedUnserved(hash: Hex, nonce: string, code: string, authorization = asPayment(hash, nonce)) {
    const prompt = `refused ${randomUUID()}`;
    const res = await gateway({ prompt }, { headers: authorization });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ error: 'payment_required', code, type: 'https://paymentauth.org/problems/verification-failed' });
    expect(res.body.mpp.nonce).not.toBe(nonce);
    expect(requestsFor(prompt)).toHaveLength(0);
    expect(await getGlobal(keys.txHash(hash), true)).toBeUndefined();
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'open' });
  }

  it("B presenting A's bound transfer with B's own challenge → 402, nothing served; A then redeems it → 200", async () => {
    const a = await paid();
    const b = await challenge();
    await refusedUnserved(a.hash, b.nonce, 'PAYMENT_NOT_BOUND');
    const prompt = `rightful ${randomUUID()}`;
    const res = await gateway({ prompt }, { headers: asPayment(a.hash, a.nonce) });
    expect(res.status).toBe(200);
    expect(res.body.payment).toEqual({ method: 'mpp', receipt: a.hash });
    expect(requestsFor(prompt)).toHaveLength(1);
  });

  it('a plain transfer with no memo → PAYMENT_NOT_BOUND', async () => {
    const { nonce, amount } = await challenge();
    await refusedUnserved(await bed.chain.transfer(bed.payer, PATH_USD, bed.recipient, parseUnits(amount, 6)), nonce, 'PAYMENT_NOT_BOUND');
  });

  it('a memo bound to another challenge, or to this challenge in another realm → PAYMENT_NOT_BOUND', async () => {
    const other = await challenge();
    const { nonce } = await challenge();
    await refusedUnserved(await bed.chain.transferWithMemo(bed.payer, PATH_USD, bed.recipient, PRICE_UNITS, other.memo), nonce, 'PAYMENT_NOT_BOUND');
    const elsewhere = attributionMemo({ challengeId: nonce, realm: 'other.example.com' });
    await refusedUnserved(await bed.chain.transferWithMemo(bed.payer, PATH_USD, bed.recipient, PRICE_UNITS, elsewhere), nonce, 'PAYMENT_NOT_BOUND');
  });

  it('a transfer mined before the challenge was issued → PAYMENT_BEFORE_CHALLENGE; one mined in its second counts', async () => {
    const { nonce, memo } = await challenge();
    const issuedSecond = Math.floor((await getGlobal<{ issuedAt: number }>(keys.mppChallenge(nonce), true))!.issuedAt / 1000);
    bed.chain.setNextBlockTimestamp(issuedSecond - 1);
    await refusedUnserved(await bed.chain.transferWithMemo(bed.payer, PATH_USD, bed.recipient, PRICE_UNITS, memo), nonce, 'PAYMENT_BEFORE_CHALLENGE');

    bed.chain.setNextBlockTimestamp(issuedSecond);
    const sameSecond = await bed.chain.transferWithMemo(bed.payer, PATH_USD, bed.recipient, PRICE_UNITS, memo);
    expect((await gateway({ prompt: 'same second' }, { headers: asPayment(sameSecond, nonce) })).status).toBe(200);
  });

  it("a drafts' credential echoing another realm → WRONG_REALM", async () => {
    const { nonce, hash } = await paid();
    const draft = { challenge: { id: nonce, realm: 'other.example.com', method: 'tempo', intent: 'charge' }, payload: { type: 'hash', hash } };
    const prompt = `realm ${randomUUID()}`;
    const res = await gateway({ prompt }, { headers: { authorization: `Payment ${Buffer.from(JSON.stringify(draft)).toString('base64url')}` } });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ code: 'WRONG_REALM', type: 'https://paymentauth.org/problems/invalid-challenge' });
    expect(requestsFor(prompt)).toHaveLength(0);
    expect(await getGlobal(keys.txHash(hash), true)).toBeUndefined();
  });

  it("the origin client's credential (scheme Payment, a 0x76 hex of JSON) is refused and nothing is served", async () => {
    const { nonce } = await challenge();
    const transaction = `0x76${Buffer.from(JSON.stringify({ to: bed.recipient, amount: '10000' })).toString('hex')}`;
    const prompt = `origin ${randomUUID()}`;
    const res = await gateway(
      { prompt },
      { headers: { authorization: `Payment ${JSON.stringify({ scheme: 'Payment', transaction, challengeNonce: nonce })}` } },
    );
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ code: 'MALFORMED_CREDENTIAL', type: 'https://paymentauth.org/problems/malformed-credential' });
    expect(requestsFor(prompt)).toHaveLength(0);
  });
});

describe('card-paid calls', () => {
  it('a subscriber gets the answer with receipt null; headers cannot stand in for the subscription', async () => {
    const session = await testSession();
    await subscribe(session.userId);
    const prompt = `card ${randomUUID()}`;
    const res = await gateway({ prompt }, { bearer: session.token, headers: { 'x-payment-method': 'card', authorization: `Bearer ${session.token}` } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ plugin: 'generate-text', message: fakeAnswerTo(prompt), payment: { method: 'card', receipt: null } });
    expect(res.headers['payment-receipt']).toBeUndefined();
  });

  it('X-Payment-Method card wins over a Payment credential: no session → 402, session → served by card', async () => {
    const { nonce, hash } = await paid();
    const cardOnly = await gateway({}, { headers: { 'x-payment-method': 'card', ...asPayment(hash, nonce) } });
    expect(cardOnly.status).toBe(402);
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'open' });
    const session = await testSession();
    await subscribe(session.userId);
    const res = await gateway({}, { session, headers: { 'x-payment-method': 'card', ...asPayment(hash, nonce) } });
    expect(res.status).toBe(200);
    expect(res.body.payment).toEqual({ method: 'card', receipt: null });
  });

  it("agent with an account: the caller's agent memory is a tool", async () => {
    const session = await testSession();
    await subscribe(session.userId);
    const agentId = await putTestAgent(session.userId);
    models.model.toolCall = { name: 'write_agent_memory', input: { key: 'venue', value: 'The Lexington' } };
    try {
      const res = await gateway({ plugin: 'agent', prompt: 'remember the venue', agentId }, { bearer: session.token });
      expect(res.status).toBe(200);
    } finally {
      models.model.toolCall = undefined;
    }
    expect((await readAgentMemory(session.userId, agentId))?.memory).toEqual({ venue: 'The Lexington' });
    const other = await testSession();
    await subscribe(other.userId);
    const foreign = await gateway({ plugin: 'agent', prompt: 'x', agentId }, { bearer: other.token });
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe('AGENT_NOT_FOUND');
  });
});

describe('speech plugins (OpenAI-compatible /audio wire formats, base64 audio in JSON)', () => {
  it('tts answers base64 audio from /audio/speech', async () => {
    const session = await testSession();
    await subscribe(session.userId);
    const res = await gateway({ plugin: 'tts', input: 'Doors at eight', voice: 'nova', format: 'mp3' }, { bearer: session.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ plugin: 'tts', payment: { method: 'card', receipt: null }, audio: { mediaType: 'audio/mpeg', format: 'mp3' } });
    expect(Buffer.from(res.body.audio.base64, 'base64').toString()).toBe('fake-audio:nova:Doors at eight');
    expect(models.model.audioRequests.at(-1)).toMatchObject({ path: '/v1/audio/speech', fields: { model: 'tts-1', input: 'Doors at eight', voice: 'nova' } });
  });

  it('stt answers the transcript of the uploaded audio, paid by MPP', async () => {
    const { nonce, hash } = await paid('stt');
    const audio = Buffer.from(`spoken words ${randomUUID()}`);
    const res = await gateway({ plugin: 'stt', audio: audio.toString('base64') }, { headers: asPayment(hash, nonce) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ plugin: 'stt', message: `transcript of: ${audio.toString()}`, payment: { method: 'mpp', receipt: hash } });
    expect(models.model.audioRequests.at(-1)).toMatchObject({ path: '/v1/audio/transcriptions', fields: { model: 'whisper-1' } });
  });

  it('refuses text and audio over the documented limits with 400', async () => {
    const session = await testSession();
    await subscribe(session.userId);
    expect((await gateway({ plugin: 'tts', input: 'x'.repeat(4097) }, { bearer: session.token })).status).toBe(400);
    expect((await gateway({ plugin: 'stt', audio: Buffer.alloc(700 * 1024 + 3).toString('base64') }, { bearer: session.token })).status).toBe(400);
  });
});
