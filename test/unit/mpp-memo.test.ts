import fc from 'fast-check';
import { PaymentRequest } from 'mppx';
import { describe, expect, it } from 'vitest';
import { attributionMemo, memoBinding } from '#domain/payments/attribution';
import { canonicalJson } from '#domain/payments/canonical-json';
// The MPP SDK's own encoder: not in its package exports, so read from its published file, unmodified.
import * as MppxAttribution from '../../node_modules/mppx/dist/tempo/Attribution.js';

/**
 * The challenge-bound memo and the canonical request JSON, against the MPP SDK (mppx) itself: the
 * same bytes for the same inputs, and a memo pays only the challenge and realm it was built for.
 */
const text = fc.string({ minLength: 1, maxLength: 64, unit: 'grapheme' });

describe('attribution memo', () => {
  it('is byte for byte what mppx encodes, with and without a client id', () => {
    fc.assert(
      fc.property(text, text, fc.option(text, { nil: undefined }), (challengeId, realm, clientId) => {
        expect(attributionMemo({ challengeId, realm, clientId })).toBe(MppxAttribution.encode({ challengeId, serverId: realm, clientId }));
      }),
      { numRuns: 500 },
    );
  });

  it('verifies for its challenge and realm whatever the client bytes, and mppx agrees', () => {
    fc.assert(
      fc.property(text, text, fc.option(text, { nil: undefined }), (challengeId, realm, clientId) => {
        const memo = attributionMemo({ challengeId, realm, clientId });
        expect(memoBinding(memo, { challengeId, realm })).toBe('bound');
        expect(memoBinding(memo.toUpperCase().replace('0X', '0x') as typeof memo, { challengeId, realm })).toBe('bound');
        expect(MppxAttribution.verifyServer(memo, realm) && MppxAttribution.verifyChallengeBinding(memo, challengeId)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('is refused for any other challenge id or realm', () => {
    fc.assert(
      fc.property(text, text, text, text, (challengeId, realm, otherId, otherRealm) => {
        fc.pre(otherId !== challengeId && otherRealm !== realm);
        const memo = attributionMemo({ challengeId, realm });
        expect(memoBinding(memo, { challengeId: otherId, realm })).toBe('other-challenge');
        expect(memoBinding(memo, { challengeId, realm: otherRealm })).toBe('other-realm');
        expect(MppxAttribution.verifyChallengeBinding(memo, otherId)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('anything without the MPP tag and version is not an MPP memo', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        const memo = `0x${Buffer.from(bytes).toString('hex')}` as const;
        fc.pre(!MppxAttribution.isMppMemo(memo));
        expect(memoBinding(memo, { challengeId: 'c', realm: 'r' })).toBe('not-mpp');
      }),
    );
    expect(memoBinding(`0x${'00'.repeat(32)}`, { challengeId: 'c', realm: 'r' })).toBe('not-mpp');
    expect(memoBinding('0x1234', { challengeId: 'c', realm: 'r' })).toBe('not-mpp');
  });
});

describe('canonical JSON (RFC 8785)', () => {
  it('encodes every JSON value as the canonicalizer mppx uses', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(Buffer.from(canonicalJson(value)).toString('base64url')).toBe(PaymentRequest.serialize(value as Record<string, unknown>));
      }),
      { numRuns: 500 },
    );
  });

  it('sorts keys by UTF-16 code units and writes numbers as ECMAScript does', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 1e21, 0.1, -0], '\u20ac': 'x', '\ud83d\ude00': 'y', A: { z: 1, y: 'é' } })).toBe(
      '{"A":{"y":"é","z":1},"a":[true,null,1e+21,0.1,0],"b":1,"€":"x","😀":"y"}',
    );
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(RangeError);
  });
});
