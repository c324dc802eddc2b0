import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A chain JSON-RPC 2.0 endpoint on loopback speaking the real wire format (single and batch
 * requests, hex quantities, standard error objects) for eth_getBalance, eth_chainId and
 * eth_blockNumber. `mode` simulates an RPC that answers, fails with HTTP 503, or never answers.
 */
export interface FakeChainRpc {
  url: string;
  /** Balance in wei of an address (any case); unknown addresses have 0. */
  setBalance(address: string, wei: bigint): void;
  mode: 'ok' | 'http-error' | 'hang';
  /** Methods received, in order. */
  calls: { method: string; params: unknown[] }[];
  close(): Promise<void>;
}

interface RpcRequest {
  jsonrpc?: string;
  id?: number | string | null;
  method?: unknown;
  params?: unknown;
}

const hex = (n: bigint) => `0x${n.toString(16)}`;

export async function startFakeChainRpc(opts: { chainId?: number; blockNumber?: bigint } = {}): Promise<FakeChainRpc> {
  const balances = new Map<string, bigint>();
  const hanging = new Set<ServerResponse>();
  const state: FakeChainRpc = {
    url: '',
    mode: 'ok',
    calls: [],
    setBalance: (address, wei) => void balances.set(address.toLowerCase(), wei),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };

  function answer(req: RpcRequest) {
    const base = { jsonrpc: '2.0', id: req.id ?? null };
    if (req.jsonrpc !== '2.0' || typeof req.method !== 'string') return { ...base, error: { code: -32600, message: 'Invalid Request' } };
    const params = Array.isArray(req.params) ? req.params : [];
    state.calls.push({ method: req.method, params });
    switch (req.method) {
      case 'eth_chainId':
        return { ...base, result: hex(BigInt(opts.chainId ?? 84532)) };
      case 'eth_blockNumber':
        return { ...base, result: hex(opts.blockNumber ?? 1_234_567n) };
      case 'eth_getBalance': {
        const [address] = params;
        if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) return { ...base, error: { code: -32602, message: 'invalid address' } };
        return { ...base, result: hex(balances.get(address.toLowerCase()) ?? 0n) };
      }
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
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
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
