import { parseAbi, parseEventLogs, TransactionNotFoundError, TransactionReceiptNotFoundError, type Hex } from 'viem';
import { getBlockNumber, getChainId, getTransaction, getTransactionReceipt } from 'viem/actions';
import { chainClient } from '#adapters/chain';
import type { ChallengeBinding } from './challenges';
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

/**
 * Proves on chain that `hash` pays the challenge: a successful receipt on the challenge's chain with
 * enough confirmations, holding one `Transfer`/`TransferWithMemo` log emitted by the challenge's
 * token contract to its recipient for at least its price in base units (bigint arithmetic only; a
 * token that emits both events for one transfer is not counted twice). Changes nothing.
 */
/** A paying verdict names the payer: the address that sent the transaction. */
export async function verifyPayment(hash: Hex, binding: ChallengeBinding, chain: ChainSettings): Promise<PaymentVerdict> {
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
  if (!toRecipient.some((log) => log.args.amount >= required)) {
    return refuse('AMOUNT_TOO_LOW', `the transfer is below the price of ${binding.amount} (${required} base units)`);
  }
  return { payer: receipt.from.toLowerCase() };
}
