import { KeyCustodyConfigError } from '#platform/crypto/envelope';
import { InvalidPrivateKeyError } from '#domain/wallets/keys';
import { WalletAddressTakenError, WalletExistsError } from '#data/wallets';
import { HttpError } from '#http/errors';

/** The answer for a wallet-creation failure the client or operator can act on; undefined for anything else. */
export function knownWalletFailure(err: unknown): HttpError | undefined {
  if (err instanceof WalletExistsError) return new HttpError(400, 'wallet exists', 'WALLET_EXISTS');
  if (err instanceof InvalidPrivateKeyError) return new HttpError(400, 'privateKey is not a valid secp256k1 private key', 'INVALID_PRIVATE_KEY');
  if (err instanceof WalletAddressTakenError) return new HttpError(409, 'this key already belongs to another wallet', 'WALLET_ADDRESS_TAKEN');
  if (err instanceof KeyCustodyConfigError)
    return new HttpError(500, 'wallet key custody is not configured', 'KEY_CUSTODY_NOT_CONFIGURED', { setup: err.setup });
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
