import { hostedWallet } from '#domain/wallets/hosted';
import { walletConfig } from '#platform/config';
import type { AuthContext } from '#domain/auth/authenticate';
import { keyCustodyStatus } from '#platform/crypto/envelope';
import { storeWallet } from '#domain/wallets/keys';
import { getWalletSummary } from '#data/wallets';
import { forbidden, notFound, unauthenticated } from '#platform/errors';
import { readBalance } from './balance';
import { creatingWallet } from './failures';

const NO_WALLET_MESSAGE = 'No wallet yet: POST /api/wallet with {"action":"create"} to create one.';

/** GET /api/wallet: the caller's wallet; without a session, the hosted wallet's description when it is configured. */
export async function getWallet(auth: AuthContext | undefined) {
  if (!auth) return hostedDescription();
  const network = walletConfig().network;
  const wallet = await getWalletSummary(auth.userId);
  if (!wallet) return { address: null, balance: '0', network, hasWallet: false as const, message: NO_WALLET_MESSAGE };
  return { address: wallet.address, balance: await readBalance(wallet.address), network, hasWallet: true as const, createdAt: wallet.createdAt };
}

function hostedDescription() {
  const provider = hostedWallet();
  if (!provider) throw unauthenticated('authentication required', 'AUTH_REQUIRED');
  return {
    agenticWallet: { status: 'configured' as const, projectId: provider.projectId, features: [...provider.features] },
    instructions: 'Sign in, then POST /api/wallet/create with your account email to create your hosted wallet; GET /api/wallet shows its address and balance.',
  };
}

/** GET /api/wallet/address: the spec's three shapes. */
export async function getWalletAddress(auth: AuthContext | undefined) {
  if (auth) return { authenticated: true as const, address: (await getWalletSummary(auth.userId))?.address ?? null };
  const custody = keyCustodyStatus();
  if (!custody.ok) return { authenticated: false as const, needsAuth: true as const, error: custody.error, setup: custody.setup };
  return { authenticated: false as const, needsAuth: true as const, message: 'Sign in to see your wallet address.' };
}

/** POST /api/wallet: `create`, `get_seed` (public fields only), `export_seed` (always refused). */
export async function runWalletAction(auth: AuthContext, action: 'create' | 'get_seed' | 'export_seed') {
  if (action === 'export_seed')
    throw forbidden('seed and private key export is disabled: keys are held encrypted and never leave the platform', 'EXPORT_FORBIDDEN');
  if (action === 'create') {
    const wallet = await creatingWallet(() => storeWallet(auth.userId, { custody: 'platform', network: walletConfig().network }));
    return { address: wallet.address, network: wallet.network, message: 'Wallet created. Its private key is stored encrypted and is never shown.' };
  }
  const wallet = await getWalletSummary(auth.userId);
  if (!wallet) throw notFound('no wallet: create one first');
  return {
    address: wallet.address,
    network: wallet.network,
    createdAt: wallet.createdAt,
    warning:
      'No seed phrase or private key is ever shown or exported: the key is held encrypted by the platform. Only send funds you are willing to keep in custody here.',
  };
}
