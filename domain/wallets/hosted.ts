import { hostedWalletConfig, walletConfig } from '#platform/config';
import { storeWallet } from './keys';
import type { WalletNetworkName } from '#data/wallets';
import { DomainError } from '#platform/errors';

/**
 * The hosted wallet behind `POST /api/wallet/create` and the unauthenticated `GET /api/wallet`
 * description (spec 4.9). Not configured by default. The `local` provider makes the keys here (viem)
 * and keeps them envelope-encrypted in the owner's partition (KMS in AWS, the local master key
 * elsewhere), so the feature works without an outside service. A vendor's hosted-wallet API would be
 * another provider behind this same interface.
 */
export interface HostedWalletProvider {
  readonly name: string;
  readonly projectId: string;
  /** What this provider really does; advertised as is, never more. */
  readonly features: readonly string[];
  readonly networks: readonly WalletNetworkName[];
  createWallet(userId: string): Promise<{ walletId: string; address: `0x${string}` }>;
}

/** Names of the settings an operator must set; never values. */
export const HOSTED_WALLET_SETUP = 'set HOSTED_WALLET_PROVIDER=local (and optionally HOSTED_WALLET_PROJECT_ID) to enable the hosted wallet';

export class HostedWalletNotConfiguredError extends DomainError {
  readonly setup = HOSTED_WALLET_SETUP;
  constructor() {
    super('unavailable', 'hosted wallet not configured', 'HOSTED_WALLET_NOT_CONFIGURED', { setup: HOSTED_WALLET_SETUP });
  }
}

function localProvider(projectId: string): HostedWalletProvider {
  return {
    name: 'local',
    projectId,
    features: ['create_wallet', 'get_balance'],
    networks: ['l2-test', 'l2-main'],
    async createWallet(userId) {
      const wallet = await storeWallet(userId, { custody: 'hosted', network: walletConfig().network });
      return { walletId: wallet.walletId, address: wallet.address };
    },
  };
}

/** The configured provider, or undefined when the hosted wallet is not set up. */
export function hostedWallet(): HostedWalletProvider | undefined {
  const { provider, projectId } = hostedWalletConfig();
  if (provider === 'local') return localProvider(projectId ?? 'local');
  return undefined;
}

export function requireHostedWallet(): HostedWalletProvider {
  const provider = hostedWallet();
  if (!provider) throw new HostedWalletNotConfiguredError();
  return provider;
}
