import { KeyCustodyConfigError } from '#platform/crypto/envelope';
import { InvalidPrivateKeyError } from '#domain/wallets/keys';
import { HostedWalletNotConfiguredError } from '#domain/wallets/hosted';
import { WalletAddressTakenError, WalletExistsError } from '#data/wallets';
import { DomainError, internal } from '#platform/errors';

/**
 * A wallet-creation failure the client or operator can act on, as the failure to answer with;
 * undefined for anything else. Key custody is the platform's own setup here (a 500 naming what to
 * set), where other routes call the same missing setup unavailable.
 */
export function knownWalletFailure(err: unknown): DomainError | undefined {
  if (
    err instanceof WalletExistsError ||
    err instanceof InvalidPrivateKeyError ||
    err instanceof WalletAddressTakenError ||
    err instanceof HostedWalletNotConfiguredError
  )
    return err;
  if (err instanceof KeyCustodyConfigError)
    return internal('wallet key custody is not configured', 'KEY_CUSTODY_NOT_CONFIGURED', { setup: err.setup }, { cause: err });
  return undefined;
}

/** Runs a wallet creation, turning the known failures into their answers. */
export async function creatingWallet<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw knownWalletFailure(err) ?? err;
  }
}
