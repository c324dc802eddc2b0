import { createEVM } from '@ethereumjs/evm';
import { createAddressFromString, setLengthLeft } from '@ethereumjs/util';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  bytesToHex,
  encodeFunctionData,
  hexToBytes,
  keccak256,
  numberToHex,
  pad,
  parseAbi,
  parseTransaction,
  recoverTransactionAddress,
  toEventSelector,
  toFunctionSelector,
  toHex,
  type Hex,
  type PrivateKeyAccount,
} from 'viem';

/**
 * A small EVM chain on loopback: an in-process EVM (ethereumjs) behind a JSON-RPC 2.0 endpoint.
 * Signed transactions (`eth_sendRawTransaction`) are recovered, executed and mined one per block,
 * so transaction hashes, receipts, statuses and logs are the EVM's own. The token it hosts is a
 * TIP-20-like ERC-20 (6 decimals) written in bytecode below: `transfer` emits `Transfer`,
 * `transferWithMemo` emits `TransferWithMemo`, a transfer above the balance reverts.
 */
export const TOKEN_ABI = parseAbi([
  'function transfer(address to, uint256 amount) returns (bool)',
  'function transferWithMemo(address to, uint256 amount, bytes32 memo)',
  'function balanceOf(address holder) view returns (uint256)',
]);

type Op = string | { push: Hex } | { label: string } | { ref: string };

const OPCODES: Record<string, number> = {
  ADD: 0x01,
  SUB: 0x03,
  GT: 0x11,
  EQ: 0x14,
  SHR: 0x1c,
  CALLER: 0x33,
  CALLDATALOAD: 0x35,
  MSTORE: 0x52,
  SLOAD: 0x54,
  SSTORE: 0x55,
  JUMPI: 0x57,
  JUMPDEST: 0x5b,
  DUP1: 0x80,
  SWAP1: 0x90,
  LOG3: 0xa3,
  LOG4: 0xa4,
  RETURN: 0xf3,
  REVERT: 0xfd,
};

/** Two passes: label offsets first (every label reference is a PUSH2), then the bytes. */
function assemble(ops: Op[]): Hex {
  const size = (op: Op) => (typeof op === 'string' ? 1 : 'push' in op ? 1 + (op.push.length - 2) / 2 : 'ref' in op ? 3 : 1);
  const labels = new Map<string, number>();
  let offset = 0;
  for (const op of ops) {
    if (typeof op === 'object' && 'label' in op) labels.set(op.label, offset);
    offset += size(op);
  }
  const bytes: number[] = [];
  for (const op of ops) {
    if (typeof op === 'string') bytes.push(OPCODES[op]!);
    else if ('label' in op) bytes.push(OPCODES.JUMPDEST!);
    else if ('ref' in op) bytes.push(0x61, labels.get(op.ref)! >> 8, labels.get(op.ref)! & 0xff);
    else {
      const data = hexToBytes(op.push);
      bytes.push(0x5f + data.length, ...data);
    }
  }
  return bytesToHex(Uint8Array.from(bytes));
}

const arg = (index: number): Op[] => [{ push: numberToHex(4 + 32 * index, { size: 1 }) }, 'CALLDATALOAD'];
const TO = arg(0);
const AMOUNT = arg(1);
const MEMO = arg(2);

/** balances[caller] -= amount (revert when short); balances[to] += amount. Balances live at slot = holder. */
const MOVE: Op[] = [
  'CALLER',
  'SLOAD',
  'DUP1',
  ...AMOUNT,
  'GT',
  { ref: 'fail' },
  'JUMPI',
  ...AMOUNT,
  'SWAP1',
  'SUB',
  'CALLER',
  'SSTORE',
  ...TO,
  'SLOAD',
  ...AMOUNT,
  'ADD',
  ...TO,
  'SSTORE',
];
const AMOUNT_TO_MEMORY: Op[] = [...AMOUNT, { push: '0x00' }, 'MSTORE'];
const RETURN_TRUE: Op[] = [{ push: '0x01' }, { push: '0x00' }, 'MSTORE', { push: '0x20' }, { push: '0x00' }, 'RETURN'];
const selector = (sig: string): Op => ({ push: toFunctionSelector(sig) });

export const TOKEN_RUNTIME = assemble([
  { push: '0x00' },
  'CALLDATALOAD',
  { push: '0xe0' },
  'SHR',
  'DUP1',
  selector('transfer(address,uint256)'),
  'EQ',
  { ref: 'transfer' },
  'JUMPI',
  'DUP1',
  selector('transferWithMemo(address,uint256,bytes32)'),
  'EQ',
  { ref: 'transferWithMemo' },
  'JUMPI',
  'DUP1',
  selector('balanceOf(address)'),
  'EQ',
  { ref: 'balanceOf' },
  'JUMPI',
  { label: 'fail' },
  { push: '0x00' },
  'DUP1',
  'REVERT',
  { label: 'balanceOf' },
  ...TO,
  'SLOAD',
  { push: '0x00' },
  'MSTORE',
  { push: '0x20' },
  { push: '0x00' },
  'RETURN',
  { label: 'transfer' },
  ...MOVE,
  ...AMOUNT_TO_MEMORY,
  ...TO,
  'CALLER',
  { push: toEventSelector('Transfer(address,address,uint256)') },
  { push: '0x20' },
  { push: '0x00' },
  'LOG3',
  ...RETURN_TRUE,
  { label: 'transferWithMemo' },
  ...MOVE,
  ...AMOUNT_TO_MEMORY,
  ...MEMO,
  ...TO,
  'CALLER',
  { push: toEventSelector('TransferWithMemo(address,address,uint256,bytes32)') },
  { push: '0x20' },
  { push: '0x00' },
  'LOG4',
  ...RETURN_TRUE,
]);

interface MinedTx {
  hash: Hex;
  /** Seconds, as a block header has it. */
  timestamp: number;
  from: Hex;
  raw: ReturnType<typeof parseTransaction>;
  blockNumber: bigint;
  status: 'success' | 'reverted';
  logs: { address: Hex; topics: Hex[]; data: Hex }[];
  gasUsed: bigint;
}

export interface LocalChain {
  url: string;
  chainId: number;
  /** `down`: every request fails with HTTP 503; `hang`: requests are never answered. */
  mode: 'ok' | 'down' | 'hang';
  deployToken(address: Hex): Promise<void>;
  mint(token: Hex, holder: Hex, amount: bigint): Promise<void>;
  balanceOf(token: Hex, holder: Hex): Promise<bigint>;
  /** Signs a call with `account`, sends it over JSON-RPC and returns the hash the node answered. */
  send(account: PrivateKeyAccount, to: Hex, data: Hex, opts?: { chainId?: number }): Promise<Hex>;
  transfer(account: PrivateKeyAccount, token: Hex, to: Hex, amount: bigint): Promise<Hex>;
  transferWithMemo(account: PrivateKeyAccount, token: Hex, to: Hex, amount: bigint, memo: Hex): Promise<Hex>;
  /** Empty blocks, for confirmations. */
  mine(blocks: number): void;
  /** The timestamp (seconds) of the next block mined, instead of the clock's; then the clock again. */
  setNextBlockTimestamp(seconds: number): void;
  /**
   * Holds the key of `account` in the node, as a wallet node does: `eth_accounts` lists it and
   * `eth_sendTransaction` from it is signed here (a JSON-RPC account for clients such as viem's).
   */
  unlock(account: PrivateKeyAccount): void;
  /**
   * `false` holds signed transactions in a mempool (no receipt, counted in the `pending` nonce) until
   * `minePending()` executes them in order; `true` (the default) mines each one as it arrives.
   */
  autoMine: boolean;
  minePending(): Promise<void>;
  /** Transactions whose sender and nonce were seen, mined or pending: a resent one is `already known`. */
  transactionCount(holder: Hex): number;
  blockNumber(): bigint;
  close(): Promise<void>;
}

const ZERO_BLOOM = `0x${'00'.repeat(256)}` as Hex;
const blockHash = (n: bigint) => keccak256(toHex(`block-${n}`));

export async function startLocalChain(opts: { chainId?: number } = {}): Promise<LocalChain> {
  const chainId = opts.chainId ?? 4217;
  const evm = await createEVM();
  const mined = new Map<Hex, MinedTx>();
  const nonces = new Map<string, number>();
  /** Next nonce per sender (lower-case), over mined and pending transactions: a lower one is refused. */
  const nextNonce = new Map<string, number>();
  const mempool: { raw: Hex; hash: Hex }[] = [];
  const hanging = new Set<ServerResponse>();
  const unlocked = new Map<string, PrivateKeyAccount>();
  const blockTimes = new Map<bigint, number>();
  let nextTimestamp: number | undefined;
  let head = 1n;
  const stamp = (block: bigint) => {
    const seconds = nextTimestamp ?? Math.floor(Date.now() / 1000);
    nextTimestamp = undefined;
    blockTimes.set(block, seconds);
    return seconds;
  };
  const blockJson = (n: bigint) => ({
    number: numberToHex(n),
    hash: blockHash(n),
    parentHash: blockHash(n - 1n),
    timestamp: numberToHex(blockTimes.get(n) ?? Math.floor(Date.now() / 1000)),
    nonce: '0x0000000000000000',
    sha3Uncles: keccak256('0x'),
    logsBloom: ZERO_BLOOM,
    transactionsRoot: keccak256('0x'),
    stateRoot: keccak256('0x'),
    receiptsRoot: keccak256('0x'),
    miner: pad('0x00', { size: 20 }),
    difficulty: '0x0',
    totalDifficulty: '0x0',
    extraData: '0x',
    size: '0x0',
    gasLimit: numberToHex(30_000_000),
    gasUsed: '0x0',
    baseFeePerGas: '0x1',
    transactions: [...mined.values()].filter((m) => m.blockNumber === n).map((m) => m.hash),
    uncles: [],
  });
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => undefined);
    return next;
  };

  async function call(to: Hex, data: Hex): Promise<Hex> {
    await evm.stateManager.checkpoint();
    try {
      const out = await evm.runCall({
        to: createAddressFromString(to),
        caller: createAddressFromString(pad('0x00', { size: 20 })),
        data: hexToBytes(data),
        gasLimit: 1_000_000n,
        skipBalance: true,
      });
      return bytesToHex(out.execResult.returnValue);
    } finally {
      await evm.stateManager.revert();
    }
  }

  async function sendRaw(raw: Hex): Promise<Hex> {
    const tx = parseTransaction(raw);
    if (tx.chainId !== chainId) throw Object.assign(new Error('invalid chain id for signer'), { rpcCode: -32000 });
    if (!tx.to) throw Object.assign(new Error('contract creation is not supported here'), { rpcCode: -32000 });
    const hash = keccak256(raw);
    if (mined.has(hash) || mempool.some((p) => p.hash === hash)) throw Object.assign(new Error('already known'), { rpcCode: -32000 });
    const from = (
      await recoverTransactionAddress({ serializedTransaction: raw as Parameters<typeof recoverTransactionAddress>[0]['serializedTransaction'] })
    ).toLowerCase() as Hex;
    const expected = nextNonce.get(from) ?? 0;
    if ((tx.nonce ?? 0) < expected) throw Object.assign(new Error('nonce too low'), { rpcCode: -32000 });
    nextNonce.set(from, (tx.nonce ?? 0) + 1);
    if (!state.autoMine) {
      mempool.push({ raw, hash });
      return hash;
    }
    return execute(tx, hash, from);
  }

  async function execute(tx: ReturnType<typeof parseTransaction>, hash: Hex, from: Hex): Promise<Hex> {
    const out = await evm.runCall({
      to: createAddressFromString(tx.to!),
      caller: createAddressFromString(from),
      data: hexToBytes(tx.data ?? '0x'),
      gasLimit: tx.gas ?? 1_000_000n,
      skipBalance: true,
    });
    head += 1n;
    const failed = !!out.execResult.exceptionError;
    mined.set(hash, {
      hash,
      timestamp: stamp(head),
      from,
      raw: tx,
      blockNumber: head,
      status: failed ? 'reverted' : 'success',
      logs: failed
        ? []
        : (out.execResult.logs ?? []).map(([address, topics, data]) => ({
            address: bytesToHex(address),
            topics: topics.map((t) => bytesToHex(t)),
            data: bytesToHex(data),
          })),
      gasUsed: out.execResult.executionGasUsed + 21_000n,
    });
    return hash;
  }

  const txJson = (m: MinedTx) => ({
    hash: m.hash,
    nonce: numberToHex(m.raw.nonce ?? 0),
    blockHash: blockHash(m.blockNumber),
    blockNumber: numberToHex(m.blockNumber),
    transactionIndex: '0x0',
    from: m.from,
    to: m.raw.to,
    value: numberToHex(m.raw.value ?? 0n),
    gas: numberToHex(m.raw.gas ?? 0n),
    maxFeePerGas: numberToHex(m.raw.maxFeePerGas ?? 0n),
    maxPriorityFeePerGas: numberToHex(m.raw.maxPriorityFeePerGas ?? 0n),
    gasPrice: numberToHex(m.raw.maxFeePerGas ?? 0n),
    input: m.raw.data ?? '0x',
    type: '0x2',
    chainId: numberToHex(m.raw.chainId ?? chainId),
    accessList: [],
    v: numberToHex(m.raw.yParity ?? 0),
    yParity: numberToHex(m.raw.yParity ?? 0),
    r: m.raw.r,
    s: m.raw.s,
  });

  const receiptJson = (m: MinedTx) => ({
    transactionHash: m.hash,
    transactionIndex: '0x0',
    blockHash: blockHash(m.blockNumber),
    blockNumber: numberToHex(m.blockNumber),
    from: m.from,
    to: m.raw.to,
    cumulativeGasUsed: numberToHex(m.gasUsed),
    gasUsed: numberToHex(m.gasUsed),
    effectiveGasPrice: numberToHex(m.raw.maxFeePerGas ?? 0n),
    contractAddress: null,
    logsBloom: ZERO_BLOOM,
    status: m.status === 'success' ? '0x1' : '0x0',
    type: '0x2',
    logs: m.logs.map((log, i) => ({
      ...log,
      blockHash: blockHash(m.blockNumber),
      blockNumber: numberToHex(m.blockNumber),
      transactionHash: m.hash,
      transactionIndex: '0x0',
      logIndex: numberToHex(i),
      removed: false,
    })),
  });

  async function answer(req: { id?: unknown; method?: unknown; params?: unknown }) {
    const base = { jsonrpc: '2.0', id: req.id ?? null };
    const params = (Array.isArray(req.params) ? req.params : []) as unknown[];
    try {
      switch (req.method) {
        case 'eth_chainId':
          return { ...base, result: numberToHex(chainId) };
        case 'eth_blockNumber':
          return { ...base, result: numberToHex(head) };
        case 'eth_getTransactionReceipt': {
          const m = mined.get(String(params[0]).toLowerCase() as Hex);
          return { ...base, result: m ? receiptJson(m) : null };
        }
        case 'eth_getTransactionByHash': {
          const m = mined.get(String(params[0]).toLowerCase() as Hex);
          return { ...base, result: m ? txJson(m) : null };
        }
        case 'eth_getTransactionCount':
          return { ...base, result: numberToHex(nextNonce.get(String(params[0]).toLowerCase()) ?? 0) };
        case 'eth_gasPrice':
        case 'eth_maxPriorityFeePerGas':
          return { ...base, result: '0x1' };
        case 'eth_estimateGas':
          return { ...base, result: numberToHex(100_000) };
        case 'eth_sendRawTransaction':
          return { ...base, result: await sendRaw(params[0] as Hex) };
        case 'eth_getBlockByNumber': {
          const tag = String(params[0]);
          const n = tag === 'latest' || tag === 'pending' || tag === 'safe' || tag === 'finalized' ? head : BigInt(tag);
          return { ...base, result: n >= 0n && n <= head ? blockJson(n) : null };
        }
        case 'eth_accounts':
          return { ...base, result: [...unlocked.values()].map((a) => a.address) };
        case 'eth_sendTransaction': {
          const [request] = params as [{ from: Hex; to: Hex; data?: Hex; input?: Hex; gas?: Hex }];
          const account = unlocked.get(String(request.from).toLowerCase());
          if (!account) throw Object.assign(new Error('unknown account'), { rpcCode: -32000 });
          const raw = await account.signTransaction({
            type: 'eip1559',
            chainId,
            nonce: nextNonce.get(account.address.toLowerCase()) ?? 0,
            to: request.to,
            data: request.data ?? request.input ?? '0x',
            gas: request.gas ? BigInt(request.gas) : 200_000n,
            maxFeePerGas: 1n,
            maxPriorityFeePerGas: 1n,
          });
          return { ...base, result: await sendRaw(raw) };
        }
        case 'eth_call': {
          const [tx] = params as [{ to: Hex; data?: Hex; input?: Hex }];
          return { ...base, result: await call(tx.to, (tx.data ?? tx.input ?? '0x') as Hex) };
        }
        default:
          return { ...base, error: { code: -32601, message: `the method ${String(req.method)} does not exist/is not available` } };
      }
    } catch (err) {
      return { ...base, error: { code: (err as { rpcCode?: number }).rpcCode ?? -32603, message: (err as Error).message } };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (state.mode === 'hang') return void hanging.add(res);
    if (state.mode === 'down') return void res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream unavailable');
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Parameters<typeof answer>[0] | Parameters<typeof answer>[0][];
    const out = Array.isArray(body) ? await Promise.all(body.map((r) => serially(() => answer(r)))) : await serially(() => answer(body));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  }

  async function rpc(method: string, params: unknown[]): Promise<unknown> {
    const res = await fetch(state.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const out = (await res.json()) as { result?: unknown; error?: { message: string } };
    if (out.error) throw new Error(`${method}: ${out.error.message}`);
    return out.result;
  }

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const state: LocalChain = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    chainId,
    mode: 'ok',
    deployToken: (address) => serially(() => evm.stateManager.putCode(createAddressFromString(address), hexToBytes(TOKEN_RUNTIME))),
    mint: (token, holder, amount) =>
      serially(async () => {
        const slot = setLengthLeft(hexToBytes(holder), 32);
        const stored = await evm.stateManager.getStorage(createAddressFromString(token), slot);
        const current = stored.length ? BigInt(bytesToHex(stored)) : 0n;
        await evm.stateManager.putStorage(createAddressFromString(token), slot, hexToBytes(numberToHex(current + amount)));
      }),
    balanceOf: async (token, holder) =>
      BigInt(
        (await rpc('eth_call', [{ to: token, data: encodeFunctionData({ abi: TOKEN_ABI, functionName: 'balanceOf', args: [holder] }) }, 'latest'])) as Hex,
      ),
    async send(account, to, data, o = {}) {
      const nonce = nonces.get(account.address) ?? 0;
      nonces.set(account.address, nonce + 1);
      const raw = await account.signTransaction({
        type: 'eip1559',
        chainId: o.chainId ?? chainId,
        nonce,
        to,
        data,
        gas: 200_000n,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
      });
      return (await rpc('eth_sendRawTransaction', [raw])) as Hex;
    },
    transfer: (account, token, to, amount) => state.send(account, token, encodeFunctionData({ abi: TOKEN_ABI, functionName: 'transfer', args: [to, amount] })),
    transferWithMemo: (account, token, to, amount, memo) =>
      state.send(account, token, encodeFunctionData({ abi: TOKEN_ABI, functionName: 'transferWithMemo', args: [to, amount, memo] })),
    mine: (blocks) => {
      for (let i = 0; i < blocks; i += 1) stamp((head += 1n));
    },
    setNextBlockTimestamp: (seconds) => void (nextTimestamp = seconds),
    unlock: (account) => void unlocked.set(account.address.toLowerCase(), account),
    autoMine: true,
    minePending: () =>
      serially(async () => {
        for (const { raw, hash } of mempool.splice(0)) {
          const tx = parseTransaction(raw);
          const from = (
            await recoverTransactionAddress({ serializedTransaction: raw as Parameters<typeof recoverTransactionAddress>[0]['serializedTransaction'] })
          ).toLowerCase() as Hex;
          await execute(tx, hash, from);
        }
      }),
    transactionCount: (holder) => nextNonce.get(holder.toLowerCase()) ?? 0,
    blockNumber: () => head,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  return state;
}
