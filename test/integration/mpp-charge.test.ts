import { describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import * as keys from '#data/keys';
import { getGlobal } from '#data/tenant';
import { challengeMemo, redeemCharge } from '#domain/payments/charge';
import { readChallenge } from '#domain/payments/challenges';
import { parsePaymentAuthorization } from '#domain/payments/credential';
import { PaymentRefusedError } from '#domain/payments/errors';
import { challenge, credentialOf, PATH_USD, PRICE_UNITS, useGatewayChain } from './gateway-helpers';

/**
 * Redemption of MPP credentials against real transfers on the local chain: each payment is served
 * exactly once, however many copies arrive together, and a failed serve leaves it redeemable.
 */
const bed = useGatewayChain();

/** A challenge and a transfer bound to it by its memo (or, `unbound`, a plain `transfer`). */
async function paidCredential(opts: { unbound?: boolean } = {}) {
  const { nonce, memo } = await challenge('generate-text');
  const hash = opts.unbound
    ? await bed.chain.transfer(bed.payer, PATH_USD, bed.recipient, PRICE_UNITS)
    : await bed.chain.transferWithMemo(bed.payer, PATH_USD, bed.recipient, PRICE_UNITS, memo);
  return { nonce, hash, credential: parsePaymentAuthorization(`Payment ${credentialOf(hash, nonce)}`) };
}

/** The memo of a stored challenge, as its 402 gave it. */
const challengeOf = async (nonce: string) => ({ memo: await challengeMemo((await readChallenge(nonce))!) });

const refusal = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PaymentRefusedError);
  return (err as PaymentRefusedError).code;
};

describe('redeemCharge', () => {
  it('serves a proven payment once, records the hash and closes the challenge', async () => {
    const { nonce, hash, credential } = await paidCredential();
    let serves = 0;
    const out = await redeemCharge(credential, 'generate-text', async () => ++serves);
    expect(out).toBe(1);
    expect(await getGlobal(keys.txHash(hash), true)).toMatchObject({ nonce, plugin: 'generate-text', chainId: 4217 });
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'served', txHash: hash });
    expect(await refusal(redeemCharge(credential, 'generate-text', async () => ++serves))).toBe('ALREADY_USED');
    expect(serves).toBe(1);
  });

  it('refuses a plain Transfer (no memo) as PAYMENT_NOT_BOUND, and records nothing', async () => {
    const { nonce, hash, credential } = await paidCredential({ unbound: true });
    let serves = 0;
    expect(await refusal(redeemCharge(credential, 'generate-text', async () => ++serves))).toBe('PAYMENT_NOT_BOUND');
    expect(serves).toBe(0);
    expect(await getGlobal(keys.txHash(hash), true)).toBeUndefined();
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'open' });
  });

  it('20 parallel copies of one credential: exactly one is served', async () => {
    const { credential } = await paidCredential();
    let serves = 0;
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => redeemCharge(credential, 'generate-text', async () => ++serves)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const reasons = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => (o.reason as PaymentRefusedError).code);
    expect(reasons).toEqual(Array(19).fill('ALREADY_USED'));
    expect(serves).toBe(1);
  });

  it('one transaction cannot pay two challenges', async () => {
    const { hash, credential } = await paidCredential();
    await redeemCharge(credential, 'generate-text', async () => 'ok');
    const second = await challenge('generate-text');
    const reused = parsePaymentAuthorization(`Payment ${credentialOf(hash, second.nonce)}`);
    expect(await refusal(redeemCharge(reused, 'generate-text', async () => 'again'))).toBe('PAYMENT_NOT_BOUND');
    expect(await getGlobal(keys.mppChallenge(second.nonce), true)).toMatchObject({ status: 'open' });
  });

  it('a serve that fails keeps the payment: the same credential is served on retry, then never again', async () => {
    const { nonce, credential } = await paidCredential();
    await expect(redeemCharge(credential, 'generate-text', async () => Promise.reject(new Error('model down')))).rejects.toThrow('model down');
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'paid' });

    let serves = 0;
    const retries = await Promise.allSettled(Array.from({ length: 10 }, () => redeemCharge(credential, 'generate-text', async () => ++serves)));
    expect(retries.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(serves).toBe(1);
    expect(await refusal(redeemCharge(credential, 'generate-text', async () => ++serves))).toBe('ALREADY_USED');
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'served' });
  });

  it('a paid challenge is not redeemable by another transaction hash or for another plugin', async () => {
    const { nonce, credential } = await paidCredential();
    await expect(redeemCharge(credential, 'generate-text', async () => Promise.reject(new Error('fail')))).rejects.toThrow();
    const { memo } = await challengeOf(nonce);
    const otherHash = await bed.chain.transferWithMemo(bed.payer, PATH_USD, bed.recipient, PRICE_UNITS, memo);
    const other = parsePaymentAuthorization(`Payment ${credentialOf(otherHash, nonce)}`);
    expect(await refusal(redeemCharge(other, 'generate-text', async () => 'x'))).toBe('ALREADY_USED');
    expect(await refusal(redeemCharge(credential, 'tts', async () => 'x'))).toBe('WRONG_PLUGIN');
  });
});

describe('parsePaymentAuthorization', () => {
  const hash = `0x${'ab'.repeat(32)}` as Hex;
  const draftOf = (challenge: Record<string, unknown>, payload: Record<string, unknown> = { type: 'hash', hash }) =>
    `Payment ${Buffer.from(JSON.stringify({ challenge: { id: 'n1', ...challenge }, payload, source: 'did:pkh:eip155:4217:0x1234567890abcdef1234567890abcdef12345678' })).toString('base64url')}`;

  it("keeps the drafts' echoed realm; refuses another method or intent, and pull mode, with their codes", () => {
    expect(parsePaymentAuthorization(draftOf({ realm: 'api.example.com', method: 'tempo', intent: 'charge' }))).toMatchObject({
      challengeNonce: 'n1',
      realm: 'api.example.com',
    });
    const codeOf = (header: string) => {
      try {
        parsePaymentAuthorization(header);
      } catch (err) {
        return (err as PaymentRefusedError).code;
      }
    };
    expect(codeOf(draftOf({ method: 'stripe', intent: 'charge' }, { spt: 'spt_1' }))).toBe('WRONG_METHOD');
    expect(codeOf(draftOf({ method: 'tempo', intent: 'session' }))).toBe('WRONG_INTENT');
    expect(codeOf(draftOf({ method: 'tempo', intent: 'charge' }, { type: 'transaction', signature: '0x76f901' }))).toBe('PULL_MODE_UNSUPPORTED');
    expect(codeOf(draftOf({ method: 'tempo', intent: 'charge' }, { type: 'proof', signature: '0x01' }))).toBe('MALFORMED_CREDENTIAL');
    expect(codeOf(draftOf({ method: 'tempo', intent: 'charge' }, { type: 'hash', hash: '0x12' }))).toBe('MALFORMED_CREDENTIAL');
  });

  it("refuses the origin client's form (scheme Payment, a 0x76-prefixed hex of JSON for a transaction)", () => {
    const transaction = `0x76${Buffer.from(JSON.stringify({ to: '0x1', amount: '10000' })).toString('hex')}`;
    for (const header of [
      `Payment ${JSON.stringify({ scheme: 'Payment', transaction, challengeNonce: 'n1' })}`,
      `Payment ${Buffer.from(JSON.stringify({ scheme: 'Payment', transaction, challengeNonce: 'n1' })).toString('base64url')}`,
    ]) {
      expect(() => parsePaymentAuthorization(header)).toThrow(expect.objectContaining({ code: 'MALFORMED_CREDENTIAL' }));
    }
  });

  it("reads the spec JSON, the same base64url-encoded, and the drafts' hash payload", () => {
    const expected = { scheme: 'tempo', transaction: hash, challengeNonce: 'n1' };
    expect(parsePaymentAuthorization(`Payment ${credentialOf(hash, 'n1')}`)).toEqual(expected);
    expect(parsePaymentAuthorization(`Payment ${Buffer.from(credentialOf(hash, 'n1')).toString('base64url')}`)).toEqual(expected);
    const draft = { challenge: { id: 'n1', method: 'tempo', intent: 'charge' }, payload: { type: 'hash', hash: hash.toUpperCase().replace('0X', '0x') } };
    expect(parsePaymentAuthorization(`payment ${Buffer.from(JSON.stringify(draft)).toString('base64url')}`)).toEqual(expected);
  });

  it.each([
    ['empty', 'Payment '],
    ['bad JSON', 'Payment {"scheme":'],
    ['not base64url JSON', 'Payment !!!'],
    ['wrong scheme', `Payment ${JSON.stringify({ scheme: 'other', transaction: `0x${'ab'.repeat(32)}`, challengeNonce: 'n' })}`],
    ['short hash', `Payment ${JSON.stringify({ scheme: 'tempo', transaction: '0xabc', challengeNonce: 'n' })}`],
  ])('refuses %s as MALFORMED_CREDENTIAL', (_what, header) => {
    expect(() => parsePaymentAuthorization(header)).toThrow(expect.objectContaining({ code: 'MALFORMED_CREDENTIAL' }));
  });
});
