import type { Hex } from 'viem';
import { requireHostedWallet } from '#domain/wallets/hosted';
import type { AuthContext } from '#domain/auth/authenticate';
import { storeWallet } from '#domain/wallets/keys';
import { normaliseEmail } from '#data/users';
import { forbidden, internal } from '#platform/errors';
import { logger } from '#http/logger';
import { creatingWallet, knownWalletFailure } from './failures';

/** POST /api/wallet/create: the caller's hosted wallet. `email` names the caller and grants nothing. */
export async function createHostedWalletForEmail(auth: AuthContext, email: string) {
  if (normaliseEmail(email) !== normaliseEmail(auth.email)) throw forbidden('email must be your account email', 'EMAIL_MISMATCH');
  try {
    const provider = requireHostedWallet();
    const wallet = await provider.createWallet(auth.userId);
    return { success: true as const, walletAddress: wallet.address, walletId: wallet.walletId, networks: [...provider.networks] };
  } catch (err) {
    const known = knownWalletFailure(err);
    if (known) throw known;
    // Only the error's class name: provider errors may quote request data.
    logger().error('hosted wallet creation failed', { errorName: (err as Error)?.name ?? 'unknown' });
    throw internal('hosted wallet creation failed', 'HOSTED_WALLET_FAILED', { details: 'the wallet could not be created or stored; try again' });
  }
}

export const hostedWalletInfo = () => ({ status: 'ok' as const, type: 'evm_wallet' as const, supportedChains: ['l2-main' as const, 'l2-test' as const] });

/** POST /api/wallet/hosted: a test-network wallet from the given key (imported, sealed) or a new one. */
export async function createHostedWallet(auth: AuthContext, privateKey: Hex | undefined) {
  const wallet = await creatingWallet(() => storeWallet(auth.userId, { custody: 'hosted', network: 'l2-test', privateKey }));
  return { success: true as const, address: wallet.address, network: 'l2-test' as const };
}
