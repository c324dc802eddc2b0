import { parseAbi, parseEventLogs, TransactionNotFoundError, TransactionReceiptNotFoundError, type Hex } from 'viem';
import { getBlockNumber, getChainId, getTransaction, getTransactionReceipt } from 'viem/actions';
import { chainClient } from '../adapters/chain';
import type { ChallengeBinding } from './challenges';
import { ChainUnavailableError, PaymentRefusedError } from './errors';

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

const refuse = (code: ConstructorParameters<typeof PaymentRefusedError>[0], message: string) => new PaymentRefusedError(code, message);

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
/** Returns the payer: the address that sent the transaction. */
export async function verifyPayment(hash: Hex, binding: ChallengeBinding, chain: ChainSettings): Promise<string> {
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
    throw new ChainUnavailableError(`the payment chain's RPC did not answer: ${(err as Error).name}`);
  }
  const [rpcChainId, receipt, transaction, head] = answers;
  if (rpcChainId !== binding.chainId) throw refuse('WRONG_CHAIN', `the payment chain is ${binding.chainId}, not ${rpcChainId}`);
  if (!receipt) throw refuse('TX_NOT_FOUND', 'no mined transaction with this hash on the payment chain');
  if (transaction?.chainId !== undefined && transaction.chainId !== binding.chainId) {
    throw refuse('WRONG_CHAIN', `the transaction was signed for chain ${transaction.chainId}, not ${binding.chainId}`);
  }
  if (receipt.status !== 'success') throw refuse('TX_REVERTED', 'the transaction reverted');
  const confirmations = head - receipt.blockNumber + 1n;
  if (confirmations < BigInt(chain.confirmations)) {
    throw refuse('NOT_CONFIRMED', `the transaction has ${confirmations} of ${chain.confirmations} confirmations; retry shortly`);
  }

  const transfers = parseEventLogs({ abi: TIP20_TRANSFER_EVENTS, logs: receipt.logs, strict: true });
  const ofToken = transfers.filter((log) => log.address.toLowerCase() === binding.currency);
  if (!ofToken.length) throw refuse('WRONG_TOKEN', `the transaction moves no ${binding.currency} tokens`);
  const toRecipient = ofToken.filter((log) => log.args.to.toLowerCase() === binding.recipient);
  if (!toRecipient.length) throw refuse('WRONG_RECIPIENT', `the transaction pays nothing to ${binding.recipient}`);
  const required = BigInt(binding.baseUnits);
  if (!toRecipient.some((log) => log.args.amount >= required)) {
    throw refuse('AMOUNT_TOO_LOW', `the transfer is below the price of ${binding.amount} (${required} base units)`);
  }
  return receipt.from.toLowerCase();
}
