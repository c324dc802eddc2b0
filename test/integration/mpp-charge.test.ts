import { describe, expect, it } from 'vitest';
import { keccak256, toHex, type Hex } from 'viem';
import * as keys from '#data/keys';
import { getGlobal } from '#data/tenant';
import { redeemCharge } from '#domain/payments/charge';
import { parsePaymentAuthorization } from '#domain/payments/credential';
import { PaymentRefusedError } from '#domain/payments/errors';
import { challenge, credentialOf, PATH_USD, PRICE_UNITS, useGatewayChain } from './gateway-helpers';

/**
 * Redemption of MPP credentials against real transfers on the local chain: each payment is served
 * exactly once, however many copies arrive together, and a failed serve leaves it redeemable.
 */
const bed = useGatewayChain();

async function paidCredential(opts: { memo?: boolean } = {}) {
  const { nonce } = await challenge('generate-text');
  const hash = opts.memo
    ? await bed.chain.transferWithMemo(bed.payer, PATH_USD, bed.recipient, PRICE_UNITS, keccak256(toHex(nonce)))
    : await bed.chain.transfer(bed.payer, PATH_USD, bed.recipient, PRICE_UNITS);
  return { nonce, hash, credential: parsePaymentAuthorization(`Payment ${credentialOf(hash, nonce)}`) };
}

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

  it('accepts a TransferWithMemo log', async () => {
    const { credential } = await paidCredential({ memo: true });
    await expect(redeemCharge(credential, 'generate-text', async () => 'ok')).resolves.toBe('ok');
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
    expect(await refusal(redeemCharge(reused, 'generate-text', async () => 'again'))).toBe('ALREADY_USED');
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
    const otherHash = await bed.chain.transfer(bed.payer, PATH_USD, bed.recipient, PRICE_UNITS);
    const other = parsePaymentAuthorization(`Payment ${credentialOf(otherHash, nonce)}`);
    expect(await refusal(redeemCharge(other, 'generate-text', async () => 'x'))).toBe('ALREADY_USED');
    expect(await refusal(redeemCharge(credential, 'tts', async () => 'x'))).toBe('WRONG_PLUGIN');
  });
});

describe('parsePaymentAuthorization', () => {
  const hash = `0x${'ab'.repeat(32)}` as Hex;

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
