import { concat, keccak256, slice, stringToBytes, type Hex } from 'viem';

/**
 * The MPP attribution memo of a TIP-20 `transferWithMemo`, byte for byte the layout of the MPP
 * SDK (mppx `tempo/Attribution`), so a payment its client makes for one of our challenges carries
 * the memo we check:
 *
 *   bytes 0..3    tag      keccak256("mpp")[0..3]
 *   byte  4       version  0x01
 *   bytes 5..14   server   keccak256(realm)[0..9]
 *   bytes 15..24  client   keccak256(clientId)[0..9], or zeros for an anonymous client
 *   bytes 25..31  nonce    keccak256(challenge id)[0..6]
 *
 * The nonce is what binds a transfer to one challenge: its id is random and only its payer learns it
 * before paying, so a transfer made for one challenge (or before any existed) cannot pay another.
 * The client bytes are the payer's own label and are not checked.
 */

const fingerprint = (value: string, size: number): Hex => slice(keccak256(stringToBytes(value)), 0, size);

const TAG = /* @__PURE__ */ (() => fingerprint('mpp', 4))();
const VERSION: Hex = '0x01';
const ANONYMOUS_CLIENT: Hex = `0x${'00'.repeat(10)}`;

export interface MemoFor {
  challengeId: string;
  realm: string;
  /** The payer's own label; none gives the anonymous memo the 402 hands out. */
  clientId?: string;
}

export function attributionMemo({ challengeId, realm, clientId }: MemoFor): Hex {
  return concat([TAG, VERSION, fingerprint(realm, 10), clientId ? fingerprint(clientId, 10) : ANONYMOUS_CLIENT, fingerprint(challengeId, 7)]);
}

/** What a transfer's memo says about one challenge, from the most to the least specific mismatch. */
export type MemoBinding = 'bound' | 'not-mpp' | 'other-realm' | 'other-challenge';

export function memoBinding(memo: Hex, challenge: { challengeId: string; realm: string }): MemoBinding {
  const m = memo.toLowerCase();
  if (m.length !== 66 || slice(m as Hex, 0, 4) !== TAG || slice(m as Hex, 4, 5) !== VERSION) return 'not-mpp';
  if (slice(m as Hex, 5, 15) !== fingerprint(challenge.realm, 10)) return 'other-realm';
  if (slice(m as Hex, 25, 32) !== fingerprint(challenge.challengeId, 7)) return 'other-challenge';
  return 'bound';
}
