import { afterAll, beforeAll, beforeEach } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { reloadConfig } from '#platform/config';
import { startLocalChain, type LocalChain } from '../helpers/local-chain';
import { call, uniqueIp, type CallOptions } from '../helpers/api';

/** Shared by the gateway tests: a local chain hosting the payment token, and the settings that point at it. */

export const PATH_USD: Hex = '0x20c0000000000000000000000000000000000000';
export const OTHER_TOKEN: Hex = '0x20c0000000000000000000000000000000000001';
/** generate-text costs 0.01 token = 10,000 base units (6 decimals). */
export const PRICE_UNITS = 10_000n;

export const randomAddress = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Hex;

export function useGatewayChain(settings: Record<string, string | undefined> = {}) {
  const bed = {
    chain: undefined as unknown as LocalChain,
    payer: privateKeyToAccount(generatePrivateKey()),
    recipient: randomAddress(),
    settings: {} as Record<string, string | undefined>,
  };
  beforeAll(async () => {
    bed.chain = await startLocalChain({ chainId: 4217 });
    await bed.chain.deployToken(PATH_USD);
    await bed.chain.deployToken(OTHER_TOKEN);
    await bed.chain.mint(PATH_USD, bed.payer.address, 1_000_000_000n);
    await bed.chain.mint(OTHER_TOKEN, bed.payer.address, 1_000_000_000n);
  });
  afterAll(() => bed.chain?.close());
  beforeEach(() => {
    bed.chain.mode = 'ok';
    bed.settings = {
      MPP_RPC_URL: bed.chain.url,
      MPP_RECIPIENT: bed.recipient,
      MPP_CHAIN_ID: '4217',
      MPP_CURRENCY: PATH_USD,
      MPP_CONFIRMATIONS: '1',
      MPP_CHALLENGE_TTL_SECONDS: '300',
      MPP_RPC_TIMEOUT_MS: '3000',
      GATEWAY_PRICES: undefined,
      GATEWAY_ALLOWED_ORIGINS: undefined,
      RATE_LIMITS: undefined,
      ...settings,
    };
    reloadConfig(bed.settings);
  });
  return bed;
}

export const credentialOf = (hash: Hex, nonce: string) => JSON.stringify({ scheme: 'tempo', transaction: hash, challengeNonce: nonce });

/** A valid input of each plugin, which every call gets unless the test sets the fields itself. */
export const PLUGIN_INPUTS: Record<string, Record<string, unknown>> = {
  'generate-text': { prompt: 'Write a two-line gig announcement.' },
  agent: { prompt: 'What time is it?' },
  tts: { input: 'Doors open at eight.' },
  stt: { audio: Buffer.from('ID3 fake mp3 frames').toString('base64') },
};

/** POST /api/v1/gateway from its own address (so no test meets another's rate-limit window). */
export function gateway(body: Record<string, unknown> = {}, opts: CallOptions = {}) {
  const plugin = String(opts.headers?.['x-plugin-id'] ?? body.plugin ?? 'generate-text');
  return call('POST', '/api/v1/gateway', { body: { ...PLUGIN_INPUTS[plugin], ...body }, ip: uniqueIp(), ...opts });
}

export interface IssuedChallenge {
  nonce: string;
  amount: string;
  expiresAt: number;
  /** The bytes32 a payment of this challenge carries (`transferWithMemo`). */
  memo: Hex;
  chainId: number;
}

export async function challenge(plugin = 'generate-text'): Promise<IssuedChallenge> {
  const res = await gateway({ plugin });
  if (res.status !== 402) throw new Error(`expected a 402 challenge, got ${res.status} ${res.text}`);
  return res.body.mpp;
}

/** The spec's `amount=, currency=, recipient=` first, then the drafts' parameters, in one Payment challenge. */
export const SPEC_CHALLENGE_PREFIX = (mpp: { amount: string; currency: string; recipient: string }) =>
  `Payment amount=${mpp.amount}, currency=${mpp.currency}, recipient=${mpp.recipient}, id="`;
