import { parseAbi, parseEventLogs, TransactionNotFoundError, TransactionReceiptNotFoundError, type Hex } from 'viem';
import { getBlock, getBlockNumber, getChainId, getTransaction, getTransactionReceipt } from 'viem/actions';
import { chainClient } from '#adapters/chain';
import { memoBinding, type MemoBinding } from './attribution';
import type { ChallengeRecord } from './challenges';
import type { RefusalCode } from './errors';

/** The two transfer events of a TIP-20 token (ERC-20 `Transfer`, and `TransferWithMemo`). */
export const TIP20_TRANSFER_EVENTS = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 amount)',
  'event TransferWithMemo(address indexed from, address indexed to, uint256 amount, bytes32 indexed memo)',
]);

export interface ChainSettings {
  rpcUrl: string;
  confirmations: number;
  timeoutMs: number;
}

/**
 * What the chain says about a payment: who paid, why it does not pay the challenge, or that the RPC
 * did not answer. An answer, not an error: ./charge.ts throws the payment errors, so this lazy chunk
 * (viem) does not share ./errors.ts with the cold start, which would put that file in a chunk of its own.
 */
export type PaymentVerdict = { payer: string } | { refused: RefusalCode; message: string } | { unreachable: string };

const refuse = (code: RefusalCode, message: string): PaymentVerdict => ({ refused: code, message });

/** Not found is an answer about the payment; anything else the RPC does means it could not answer. */
async function orMissing<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof TransactionReceiptNotFoundError || err instanceof TransactionNotFoundError) return undefined;
    throw err;
  }
}

/** What the challenge a payment is checked against holds. */
export type PaidChallenge = Pick<ChallengeRecord, 'nonce' | 'realm' | 'issuedAt' | 'amount' | 'baseUnits' | 'currency' | 'recipient' | 'chainId'>;

const NOT_BOUND: Record<Exclude<MemoBinding, 'bound'>, string> = {
  'not-mpp': "the paying transfer carries no memo bound to this challenge: pay with transferWithMemo and the challenge's memo",
  'other-realm': 'the paying transfer carries a memo for another realm',
  'other-challenge': 'the paying transfer carries a memo bound to another challenge',
};
const MISMATCH_ORDER: Exclude<MemoBinding, 'bound'>[] = ['other-challenge', 'other-realm', 'not-mpp'];

/**
 * Proves on chain that `hash` pays the challenge: a successful receipt on the challenge's chain with
 * enough confirmations, mined no earlier than the challenge was issued, holding one `TransferWithMemo`
 * log emitted by the challenge's token contract to its recipient for at least its price in base units
 * (bigint arithmetic only) whose memo is bound to this challenge (./attribution.ts). Transfers are
 * public, so without the memo anyone could present another payer's transaction. Changes nothing: a
 * refused hash stays redeemable by the challenge it was made for.
 *
 * Block timestamps are whole seconds, so "after the challenge" is read at that granularity: a block of
 * the second the challenge was issued in counts. The memo is what binds a payment and is checked first
 * (another payer's transfer is refused as not bound, whenever it was mined); the time check refuses a
 * bound transfer the chain says is older than its challenge.
 */
/** A paying verdict names the payer: the address that sent the transaction. */
export async function verifyPayment(hash: Hex, challenge: PaidChallenge, chain: ChainSettings): Promise<PaymentVerdict> {
  const binding = challenge;
  const client = await chainClient(chain.rpcUrl, chain.timeoutMs);
  let answers;
  try {
    answers = await Promise.all([
      getChainId(client),
      orMissing(getTransactionReceipt(client, { hash })),
      orMissing(getTransaction(client, { hash })),
      getBlockNumber(client, { cacheTime: 0 }),
    ]);
  } catch (err) {
    return { unreachable: `the payment chain's RPC did not answer: ${(err as Error).name}` };
  }
  const [rpcChainId, receipt, transaction, head] = answers;
  if (rpcChainId !== binding.chainId) return refuse('WRONG_CHAIN', `the payment chain is ${binding.chainId}, not ${rpcChainId}`);
  if (!receipt) return refuse('TX_NOT_FOUND', 'no mined transaction with this hash on the payment chain');
  if (transaction?.chainId !== undefined && transaction.chainId !== binding.chainId) {
    return refuse('WRONG_CHAIN', `the transaction was signed for chain ${transaction.chainId}, not ${binding.chainId}`);
  }
  if (receipt.status !== 'success') return refuse('TX_REVERTED', 'the transaction reverted');
  const confirmations = head - receipt.blockNumber + 1n;
  if (confirmations < BigInt(chain.confirmations)) {
    return refuse('NOT_CONFIRMED', `the transaction has ${confirmations} of ${chain.confirmations} confirmations; retry shortly`);
  }

  const transfers = parseEventLogs({ abi: TIP20_TRANSFER_EVENTS, logs: receipt.logs, strict: true });
  const ofToken = transfers.filter((log) => log.address.toLowerCase() === binding.currency);
  if (!ofToken.length) return refuse('WRONG_TOKEN', `the transaction moves no ${binding.currency} tokens`);
  const toRecipient = ofToken.filter((log) => log.args.to.toLowerCase() === binding.recipient);
  if (!toRecipient.length) return refuse('WRONG_RECIPIENT', `the transaction pays nothing to ${binding.recipient}`);
  const required = BigInt(binding.baseUnits);
  const paying = toRecipient.filter((log) => log.args.amount >= required);
  if (!paying.length) return refuse('AMOUNT_TOO_LOW', `the transfer is below the price of ${binding.amount} (${required} base units)`);

  const bindings = paying.map((log) =>
    log.eventName === 'TransferWithMemo' ? memoBinding(log.args.memo, { challengeId: challenge.nonce, realm: challenge.realm }) : 'not-mpp',
  );
  if (!bindings.includes('bound')) return refuse('PAYMENT_NOT_BOUND', NOT_BOUND[MISMATCH_ORDER.find((m) => bindings.includes(m))!]);

  let minedAt: bigint;
  try {
    minedAt = (await getBlock(client, { blockNumber: receipt.blockNumber, includeTransactions: false })).timestamp;
  } catch (err) {
    return { unreachable: `the payment chain's RPC did not answer: ${(err as Error).name}` };
  }
  if (minedAt < BigInt(Math.floor(challenge.issuedAt / 1000))) {
    return refuse('PAYMENT_BEFORE_CHALLENGE', 'the transaction was mined before this challenge was issued');
  }
  return { payer: receipt.from.toLowerCase() };
}
