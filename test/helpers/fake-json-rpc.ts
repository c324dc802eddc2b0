import { createEVM, type EVM } from '@ethereumjs/evm';
import { createAddressFromString } from '@ethereumjs/util';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bytesToHex, decodeFunctionData, encodeAbiParameters, encodeFunctionResult, erc20Abi, hexToBytes, namehash, parseAbi, type Hex } from 'viem';
import { attestationIndexerAbi, easAbi, type Attestation } from '#adapters/eas';

/**
 * A JSON-RPC 2.0 chain endpoint on loopback (single and batch requests, hex quantities, standard
 * error objects). It holds native balances (`eth_getBalance`) and ERC-20 token balances: `eth_call`
 * of `balanceOf(address)` on a known token contract answers the real ABI-encoded uint256, so viem's
 * `getBalance` and `readContract` work against it unchanged; `eth_chainId` and `eth_blockNumber`
 * answer too. Any other call (another contract, another function, code to deploy) is answered as
 * the EVM would a call into an account without code: an execution revert. `mode` simulates an RPC
 * that answers, fails with HTTP 503, or never answers.
 */
export interface FakeJsonRpc {
  url: string;
  /** Native balance in wei of an address (any case); unknown addresses have 0. */
  setBalance(address: string, wei: bigint): void;
  setTokenBalance(token: string, holder: string, amount: bigint): void;
  /** Makes `contract` an EAS contract whose `getAttestation(uid)` answers this attestation (unknown UIDs: all zeros, as EAS does). */
  setAttestation(contract: string, attestation: Attestation): void;
  /** Makes `indexer` a Coinbase attestation indexer whose `getAttestationUid(recipient, schemaUid)` answers `uid` (unknown pairs: zero). */
  setIndexedAttestation(indexer: string, recipient: string, schemaUid: string, uid: Hex): void;
  /** Makes `resolver` an ENS Universal Resolver where `name` resolves to `address` (unknown names: the zero address, as an unset record). */
  setEnsAddress(resolver: string, name: string, address: Hex): void;
  mode: 'ok' | 'http-error' | 'hang';
  /** Methods received, in order. */
  calls: string[];
  /** The same requests with their parameters. */
  requests: { method: string; params: unknown[] }[];
  close(): Promise<void>;
}

interface RpcRequest {
  jsonrpc?: string;
  id?: number | string | null;
  method?: unknown;
  params?: unknown;
}

type Answer = { result: unknown } | { error: { code: number; message: string; data?: string } };

const universalResolverAbi = parseAbi(['function resolveWithGateways(bytes name, bytes data, string[] gateways) view returns (bytes, address)']);
const addrAbi = parseAbi(['function addr(bytes32 node) view returns (address)']);

const REVERT: Answer = { error: { code: 3, message: 'execution reverted', data: '0x' } };

const hex = (n: bigint) => `0x${n.toString(16)}`;

export async function startFakeJsonRpc(opts: { chainId?: number; blockNumber?: bigint } = {}): Promise<FakeJsonRpc> {
  const balances = new Map<string, Map<string, bigint>>();
  const nativeBalances = new Map<string, bigint>();
  const attestations = new Map<string, Map<string, Attestation>>();
  const indexed = new Map<string, Map<string, Hex>>();
  const ensNames = new Map<string, Map<string, Hex>>();
  const hanging = new Set<ServerResponse>();
  const state: FakeJsonRpc = {
    url: '',
    mode: 'ok',
    calls: [],
    requests: [],
    setBalance: (address, wei) => void nativeBalances.set(address.toLowerCase(), wei),
    setTokenBalance(token, holder, amount) {
      const holders = balances.get(token.toLowerCase()) ?? new Map<string, bigint>();
      holders.set(holder.toLowerCase(), amount);
      balances.set(token.toLowerCase(), holders);
    },
    setAttestation(contract, attestation) {
      const byUid = attestations.get(contract.toLowerCase()) ?? new Map<string, Attestation>();
      byUid.set(attestation.uid.toLowerCase(), attestation);
      attestations.set(contract.toLowerCase(), byUid);
    },
    setIndexedAttestation(indexer, recipient, schemaUid, uid) {
      const byKey = indexed.get(indexer.toLowerCase()) ?? new Map<string, Hex>();
      byKey.set(`${recipient.toLowerCase()}|${schemaUid.toLowerCase()}`, uid);
      indexed.set(indexer.toLowerCase(), byKey);
    },
    setEnsAddress(resolver, name, address) {
      const byNode = ensNames.get(resolver.toLowerCase()) ?? new Map<string, Hex>();
      byNode.set(namehash(name), address);
      ensNames.set(resolver.toLowerCase(), byNode);
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };

  function ethCall(params: unknown[]): Answer {
    const [tx] = params as [{ to?: string; data?: string; input?: string } | undefined];
    const data = (tx?.data ?? tx?.input) as `0x${string}` | undefined;
    const easAttestations = tx?.to ? attestations.get(tx.to.toLowerCase()) : undefined;
    if (easAttestations && data) return easCall(easAttestations, data);
    const indexer = tx?.to ? indexed.get(tx.to.toLowerCase()) : undefined;
    if (indexer && data) return indexerCall(indexer, data);
    const resolver = tx?.to ? ensNames.get(tx.to.toLowerCase()) : undefined;
    if (resolver && data) return universalResolverCall(resolver, data);
    const holders = tx?.to ? balances.get(tx.to.toLowerCase()) : undefined;
    if (!holders || !data) return REVERT;
    let call;
    try {
      call = decodeFunctionData({ abi: erc20Abi, data });
    } catch {
      return REVERT;
    }
    if (call.functionName !== 'balanceOf') return REVERT;
    const [holder] = call.args as [string];
    return { result: encodeFunctionResult({ abi: erc20Abi, functionName: 'balanceOf', result: holders.get(holder.toLowerCase()) ?? 0n }) };
  }

  function easCall(byUid: Map<string, Attestation>, data: Hex): Answer {
    let uid: Hex;
    try {
      const call = decodeFunctionData({ abi: easAbi, data });
      uid = call.args[0];
    } catch {
      return REVERT;
    }
    const zero = `0x${'0'.repeat(64)}` as Hex;
    const a = byUid.get(uid.toLowerCase()) ?? {
      uid: zero,
      schema: zero,
      time: 0n,
      expirationTime: 0n,
      revocationTime: 0n,
      refUID: zero,
      recipient: `0x${'0'.repeat(40)}` as Hex,
      attester: `0x${'0'.repeat(40)}` as Hex,
      revocable: false,
      data: '0x' as Hex,
    };
    // The return value as the contract's ABI encoder writes it: one dynamic tuple.
    return { result: encodeAbiParameters(easAbi[0].outputs, [a]) };
  }

  function indexerCall(byKey: Map<string, Hex>, data: Hex): Answer {
    try {
      const [recipient, schemaUid] = decodeFunctionData({ abi: attestationIndexerAbi, data }).args;
      const uid = byKey.get(`${recipient.toLowerCase()}|${schemaUid.toLowerCase()}`) ?? (`0x${'0'.repeat(64)}` as Hex);
      return { result: encodeFunctionResult({ abi: attestationIndexerAbi, functionName: 'getAttestationUid', result: uid }) };
    } catch {
      return REVERT;
    }
  }

  /** `resolveWithGateways(name, addr(node), gateways)` as the Universal Resolver answers it: the resolver's ABI-encoded answer and the resolver address. */
  function universalResolverCall(byNode: Map<string, Hex>, data: Hex): Answer {
    try {
      const [, call] = decodeFunctionData({ abi: universalResolverAbi, data }).args;
      const [node] = decodeFunctionData({ abi: addrAbi, data: call }).args;
      const address = byNode.get(node) ?? (`0x${'0'.repeat(40)}` as Hex);
      const answer = encodeFunctionResult({ abi: addrAbi, functionName: 'addr', result: address });
      return { result: encodeFunctionResult({ abi: universalResolverAbi, functionName: 'resolveWithGateways', result: [answer, `0x${'11'.repeat(20)}`] }) };
    } catch {
      return REVERT;
    }
  }

  function answer(req: RpcRequest) {
    const base = { jsonrpc: '2.0', id: req.id ?? null };
    if (req.jsonrpc !== '2.0' || typeof req.method !== 'string') return { ...base, error: { code: -32600, message: 'Invalid Request' } };
    const params = Array.isArray(req.params) ? req.params : [];
    state.calls.push(req.method);
    state.requests.push({ method: req.method, params });
    switch (req.method) {
      case 'eth_chainId':
        return { ...base, result: hex(BigInt(opts.chainId ?? 8453)) };
      case 'eth_blockNumber':
        return { ...base, result: hex(opts.blockNumber ?? 1_234_567n) };
      case 'eth_getBalance': {
        const [address] = params;
        if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) return { ...base, error: { code: -32602, message: 'invalid address' } };
        return { ...base, result: hex(nativeBalances.get(address.toLowerCase()) ?? 0n) };
      }
      case 'eth_call':
        return { ...base, ...ethCall(params) };
      default:
        return { ...base, error: { code: -32601, message: `the method ${req.method} does not exist/is not available` } };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (state.mode === 'hang') {
      hanging.add(res);
      return;
    }
    if (state.mode === 'http-error') {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream unavailable');
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
      return;
    }
    const out = Array.isArray(body) ? body.map((r) => answer(r as RpcRequest)) : answer(body as RpcRequest);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  }

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** A loopback URL where nothing listens: connections are refused at once. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return `http://127.0.0.1:${port}`;
}

/**
 * A JSON-RPC endpoint backed by a real EVM (ethereumjs, in memory): `eth_call` executes the call,
 * including deployless calls (no `to`: the data is init code, the answer what it returns), and
 * never keeps its state changes, as a node's `eth_call` does. `deploy` installs runtime code and
 * `transact` runs a call whose changes stay, to set the chain up before a test.
 */
export interface EvmJsonRpc {
  url: string;
  calls: string[];
  putCode(address: Hex, runtime: Hex): Promise<void>;
  transact(to: Hex, data: Hex): Promise<void>;
  close(): Promise<void>;
}

async function execute(evm: EVM, tx: { to?: Hex; from?: Hex; data?: Hex }) {
  return evm.runCall({
    to: tx.to ? createAddressFromString(tx.to) : undefined,
    caller: createAddressFromString(tx.from ?? '0x0000000000000000000000000000000000000000'),
    data: hexToBytes(tx.data ?? '0x'),
    gasLimit: 30_000_000n,
    skipBalance: true,
  });
}

export async function startEvmJsonRpc(opts: { chainId?: number } = {}): Promise<EvmJsonRpc> {
  const evm = await createEVM();
  const calls: string[] = [];
  // One call at a time: each runs in a checkpoint of the one shared state and reverts it.
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => undefined);
    return next;
  };

  async function answer(req: RpcRequest) {
    const base = { jsonrpc: '2.0', id: req.id ?? null };
    if (typeof req.method !== 'string') return { ...base, error: { code: -32600, message: 'Invalid Request' } };
    calls.push(req.method);
    if (req.method === 'eth_chainId') return { ...base, result: `0x${(opts.chainId ?? 8453).toString(16)}` };
    if (req.method !== 'eth_call') return { ...base, error: { code: -32601, message: `the method ${req.method} does not exist/is not available` } };
    const [tx] = (Array.isArray(req.params) ? req.params : []) as [{ to?: Hex; from?: Hex; data?: Hex; input?: Hex }];
    await evm.stateManager.checkpoint();
    try {
      const out = await execute(evm, { ...tx, data: tx.data ?? tx.input });
      if (out.execResult.exceptionError) return { ...base, error: { code: 3, message: 'execution reverted', data: bytesToHex(out.execResult.returnValue) } };
      return { ...base, result: bytesToHex(out.execResult.returnValue) };
    } finally {
      await evm.stateManager.revert();
    }
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RpcRequest | RpcRequest[];
    const out = Array.isArray(body) ? await Promise.all(body.map((r) => serially(() => answer(r)))) : await serially(() => answer(body));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    putCode: (address, runtime) => evm.stateManager.putCode(createAddressFromString(address), hexToBytes(runtime)),
    async transact(to, data) {
      const out = await serially(() => execute(evm, { to, data }));
      if (out.execResult.exceptionError) throw new Error(`transaction reverted: ${out.execResult.exceptionError.error}`);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
