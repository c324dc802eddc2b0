import type { Hex } from 'viem';
import { gatewayConfig } from '#platform/config';
import { decimalToUnits, TIP20_DECIMALS } from './gateway-card';
import { serveMppChallenge } from '#data/mpp-challenges';
import { consumeChallenge, issueChallenge, readChallenge, reclaimPaidChallenge, txHashUsed, type ChallengeBinding, type ChallengeRecord } from './challenges';
import type { MppCredential } from './credential';
import { ChainUnavailableError, PaymentRefusedError } from './errors';

const mppSettings = () => gatewayConfig().mpp;

/** Machine payments need somewhere to be paid and a chain to check; without either they are off. */
export const mppEnabled = () => !!mppSettings().recipient && !!mppSettings().rpcUrl;

export const priceOf = (plugin: string): string => gatewayConfig().prices[plugin]!;

/** A fresh challenge for one call of `plugin`, stored with everything a payment will be checked against. */
export async function issueChargeChallenge(plugin: string, now = Date.now()): Promise<ChallengeRecord> {
  const s = mppSettings();
  const amount = priceOf(plugin);
  const binding: ChallengeBinding = {
    plugin,
    amount,
    baseUnits: decimalToUnits(amount, TIP20_DECIMALS).toString(),
    currency: s.currency,
    recipient: s.recipient!,
    chainId: s.chainId,
    realm: s.realm,
  };
  return issueChallenge(binding, s.challengeTtlSeconds, now);
}

/**
 * The memo a payment of `challenge` must carry (`transferWithMemo`): the anonymous attribution memo
 * of ./attribution.ts. Loaded on use, as viem's keccak is.
 */
export async function challengeMemo(challenge: Pick<ChallengeRecord, 'nonce' | 'realm'>): Promise<`0x${string}`> {
  const { attributionMemo } = await import('./attribution');
  return attributionMemo({ challengeId: challenge.nonce, realm: challenge.realm });
}

/** A challenge stored before realms and issue times were: the realm of the settings, no earliest block. */
const withBindingDefaults = (stored: ChallengeRecord | undefined): ChallengeRecord | undefined =>
  stored && { ...stored, realm: stored.realm ?? mppSettings().realm, issuedAt: stored.issuedAt ?? 0 };

/** Checks of the nonce, in the order the gateway promises, before anything is asked of the chain. */
function checkChallenge(challenge: ChallengeRecord | undefined, credential: MppCredential, plugin: string, now: number): ChallengeRecord {
  if (!challenge) throw new PaymentRefusedError('UNKNOWN_NONCE', 'this challenge nonce was not issued here');
  if (challenge.status === 'open' && challenge.challengeExpiresAt <= now)
    throw new PaymentRefusedError('EXPIRED', 'this challenge has expired; pay the fresh one');
  if (challenge.status === 'served' || (challenge.status === 'paid' && challenge.txHash !== credential.transaction)) {
    throw new PaymentRefusedError('ALREADY_USED', 'this payment or challenge has already been used');
  }
  if (challenge.plugin !== plugin) throw new PaymentRefusedError('WRONG_PLUGIN', `this challenge pays for the ${challenge.plugin} plugin`);
  if (credential.realm !== undefined && credential.realm !== challenge.realm) {
    throw new PaymentRefusedError('WRONG_REALM', `this challenge was issued for the realm "${challenge.realm}"`);
  }
  return challenge;
}

/**
 * Redeems an MPP credential for one serve of `plugin`: the payment is proven on chain before
 * anything changes, then spent (nonce + hash, one transaction), then `serve` runs under a lease.
 * If `serve` fails the payment stays redeemable with the same credential; once served, never again.
 */
export interface RedeemedPayment {
  /** The transaction hash. */
  reference: string;
  payer: string;
}

export async function redeemCharge<T>(credential: MppCredential, plugin: string, serve: (payment: RedeemedPayment) => Promise<T>): Promise<T> {
  if (!mppEnabled()) throw new PaymentRefusedError('MPP_NOT_CONFIGURED', 'machine payments are not configured on this server');
  const now = Date.now();
  const challenge = checkChallenge(withBindingDefaults(await readChallenge(credential.challengeNonce)), credential, plugin, now);
  let leaseId: string;
  let payer: string;
  if (challenge.status === 'paid') {
    leaseId = await reclaimPaidChallenge(challenge, credential.transaction, now);
    payer = challenge.payer!;
  } else {
    const s = mppSettings();
    // The chain proof (viem) is loaded on the first paid call, not by every 402 a container answers.
    const { verifyPayment } = await import('./verify');
    const verdict = await verifyPayment(credential.transaction as Hex, challenge, {
      rpcUrl: s.rpcUrl!,
      confirmations: s.confirmations,
      timeoutMs: s.rpcTimeoutMs,
    });
    if ('unreachable' in verdict) throw new ChainUnavailableError(verdict.unreachable);
    if ('refused' in verdict) throw new PaymentRefusedError(verdict.refused, verdict.message);
    payer = verdict.payer;
    if (await txHashUsed(credential.transaction)) throw new PaymentRefusedError('ALREADY_USED', 'this transaction has already paid for a call');
    leaseId = await consumeChallenge(challenge, credential.transaction, payer);
  }

  return serveMppChallenge(challenge.nonce, leaseId, () => serve({ reference: credential.transaction, payer }));
}
