import { randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import { chainClient } from '#adapters/chain';
import { chainConfig } from '#platform/config';
import { consumeSingleUse, issueSingleUse } from '#data/single-use';
import { DomainError } from '#platform/errors';

/**
 * Sign-In with Ethereum (EIP-4361) on the L2 main network. The message is parsed with viem's own
 * SIWE parser (`viem/siwe`; the reference grammar `@spruceid/siwe-parser` and its apg-js runtime
 * were a large part of the accounts bundle), held to the exact EIP-4361 text of its fields, checked
 * against this deployment, and its signature verified with viem: EOAs locally, smart wallets
 * (ERC-1271, and ERC-6492 for wallets not yet deployed) through the chain RPC with a bounded timeout.
 */
export const SIWE_CHAIN_ID = 8453;
export const NONCE_TTL_SECONDS = 600;
/** Clocks of wallets and servers disagree a little; a message "issued" this far ahead still counts. */
export const CLOCK_SKEW_SECONDS = 60;

/** The message or signature does not hold: always the spec's 401. */
export class SiweRejectedError extends DomainError {
  constructor(message: string) {
    super('unauthenticated', message, 'SIWE_INVALID');
  }
}
/** The chain cannot be asked (not configured, down, or too slow): 503, never 401 or 500. */
export class ChainUnavailableError extends DomainError {
  /** Why, for the logs; the client is told only to try again. */
  constructor(readonly reason: string) {
    super('unavailable', 'the chain cannot verify this wallet signature right now; try again', 'CHAIN_UNAVAILABLE');
  }
}

export interface SiweMessage {
  address: `0x${string}`;
  domain: string;
  uri: string;
  chainId: number;
  nonce: string;
  issuedAt: string;
  expirationTime?: string;
  notBefore?: string;
  scheme?: string;
}

const DATE_LINE = /^(Issued At|Expiration Time|Not Before): (.+)$/gm;

/** The same text with each timestamp written as `toISOString()` does (EIP-4361 allows any RFC 3339 form). */
const withIsoDates = (text: string) =>
  text.replace(DATE_LINE, (line, name: string, value: string) => {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? line : `${name}: ${date.toISOString()}`;
  });

export async function parseSiweMessage(text: string): Promise<SiweMessage> {
  const { createSiweMessage, getAddress, parseEip4361 } = await import('./viem-siwe');
  const invalid = () => new SiweRejectedError('not a valid Sign-In with Ethereum message');
  const fields = parseEip4361(text);
  const { address, domain, uri, version, chainId, nonce, issuedAt, expirationTime, notBefore } = fields;
  if (!address || !domain || !uri || !version || chainId === undefined || !nonce || !issuedAt) throw invalid();
  if ([issuedAt, expirationTime, notBefore].some((date) => date && Number.isNaN(date.getTime()))) throw invalid();
  // viem's parser finds the fields anywhere in the text and accepts any address case or version;
  // the reference grammar we replaced did not. Rebuilding the message from its fields (which checks
  // the version, nonce, URI, domain and scheme forms and writes the EIP-55 address) and requiring
  // the very same text keeps that strictness: extra lines, a lower-case address or a field out of
  // place fail here.
  let canonical: string;
  try {
    canonical = createSiweMessage({ ...fields, address, domain, uri, version, chainId, nonce });
  } catch {
    throw invalid();
  }
  if (withIsoDates(text) !== canonical) throw invalid();
  return {
    address: getAddress(address),
    domain,
    uri,
    chainId,
    nonce,
    issuedAt: issuedAt.toISOString(),
    expirationTime: expirationTime?.toISOString(),
    notBefore: notBefore?.toISOString(),
    scheme: fields.scheme,
  };
}

const seconds = (iso: string) => Date.parse(iso) / 1000;

/** Everything about the message that needs no I/O: where it is for, on which chain, and when. */
export function checkSiweMessage(msg: SiweMessage, appUrl: string, now = Date.now()): void {
  const app = new URL(appUrl);
  const nowS = now / 1000;
  if (msg.domain !== app.host) throw new SiweRejectedError('message domain does not match this application');
  if (msg.scheme !== undefined && `${msg.scheme}:` !== app.protocol) throw new SiweRejectedError('message scheme does not match this application');
  let uri: URL;
  try {
    uri = new URL(msg.uri);
  } catch {
    throw new SiweRejectedError('message URI is not a URL');
  }
  if (uri.origin !== app.origin) throw new SiweRejectedError('message URI does not match this application');
  if (msg.chainId !== SIWE_CHAIN_ID) throw new SiweRejectedError(`message must be for chain id ${SIWE_CHAIN_ID}`);
  const issued = seconds(msg.issuedAt);
  if (!Number.isFinite(issued) || issued > nowS + CLOCK_SKEW_SECONDS) throw new SiweRejectedError('message is issued in the future');
  if (msg.expirationTime !== undefined && !(seconds(msg.expirationTime) > nowS)) throw new SiweRejectedError('message has expired');
  if (msg.notBefore !== undefined && !(seconds(msg.notBefore) <= nowS + CLOCK_SKEW_SECONDS)) throw new SiweRejectedError('message is not valid yet');
}

/** EIP-4361 nonces are alphanumeric, at least 8 characters; 128 random bits in hex. */
export async function issueNonce(now = Date.now()): Promise<{ nonce: string; expiresAt: string }> {
  const nonce = randomBytes(16).toString('hex');
  const expiresAtS = Math.floor(now / 1000) + NONCE_TTL_SECONDS;
  await issueSingleUse('siweNonce', nonce, { createdAt: new Date(now).toISOString() }, expiresAtS);
  return { nonce, expiresAt: new Date(expiresAtS * 1000).toISOString() };
}

/**
 * One conditional delete: of any number of concurrent sign-ins presenting the nonce, exactly one
 * gets true. An expired nonce (TTL deletion is late) counts as unknown.
 */
export async function consumeNonce(nonce: string, now = Date.now()): Promise<boolean> {
  return (await consumeSingleUse('siweNonce', nonce, now)) !== undefined;
}

async function signedByKeyOf(address: Hex, message: string, signature: Hex): Promise<boolean> {
  const { isAddressEqual, recoverMessageAddress } = await import('./viem-siwe');
  try {
    return isAddressEqual(await recoverMessageAddress({ message, signature }), address);
  } catch {
    return false;
  }
}

/** A revert means the validator refused the signature; anything else means we could not ask. */
const isRevert = (viem: typeof import('./viem-siwe'), err: unknown) =>
  err instanceof viem.BaseError && !!err.walk((e) => e instanceof viem.ExecutionRevertedError);

/**
 * true when the signature is the address's: an EOA's (recovered locally, no I/O), or a smart
 * wallet's, checked by the ERC-6492 universal validator in one deployless `eth_call` (it also
 * covers deployed ERC-1271 wallets). Throws ChainUnavailableError when that call cannot be made.
 */
export async function verifySiweSignature(address: Hex, message: string, signature: Hex): Promise<boolean> {
  if (signature.length % 2 !== 0) return false;
  const viem = await import('./viem-siwe');
  const { call, encodeDeployData, erc6492SignatureValidatorAbi, erc6492SignatureValidatorByteCode, hashMessage, isErc6492Signature, size } = viem;
  const wrapped = isErc6492Signature(signature);
  if (!wrapped && (await signedByKeyOf(address, message, signature))) return true;

  const { rpcUrl, rpcTimeoutMs } = chainConfig();
  if (!rpcUrl) {
    // A plain 65-byte signature that does not recover is almost surely just wrong; anything else is a smart wallet's.
    if (!wrapped && size(signature) === 65) return false;
    throw new ChainUnavailableError('smart-wallet signatures need the chain RPC, which is not configured');
  }
  const data = encodeDeployData({
    abi: erc6492SignatureValidatorAbi,
    bytecode: erc6492SignatureValidatorByteCode,
    args: [address, hashMessage(message), signature],
  });
  try {
    const out = await call(await chainClient(rpcUrl, rpcTimeoutMs), { data });
    return out.data !== undefined && BigInt(out.data === '0x' ? 0 : out.data) === 1n;
  } catch (err) {
    if (isRevert(viem, err)) return false;
    throw new ChainUnavailableError('the chain RPC did not answer');
  }
}
