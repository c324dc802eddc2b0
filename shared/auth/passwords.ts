import { hash, verify, type Algorithm, type Options } from '@node-rs/argon2';

/**
 * Password hashing: argon2id with the OWASP Password Storage Cheat Sheet's first configuration
 * (19 MiB of memory, 2 iterations, 1 lane). The parameters travel inside each PHC string, so
 * raising them later still verifies the hashes made with these.
 */

// `Algorithm` is a const enum, which isolatedModules cannot read at run time; 2 is Argon2id.
const ARGON2ID = 2 as Algorithm;

export const ARGON2_OPTIONS: Options = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 };

export const hashPassword = (password: string): Promise<string> => hash(password, ARGON2_OPTIONS);

/** False for a wrong password and for a stored value that is not a valid hash; never throws for those. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/**
 * The hash of a random secret nobody knows, made with the same parameters. Checking a password
 * against it when the account does not exist (or has no password) costs the same as a real check,
 * so the answer's timing does not reveal which emails have accounts.
 */
const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$phbtRDuYwXT/u11uO897hQ$KpSfqXxivveMau7TwyQb5BMUtaFf7MKSusj5cZ77KzE';

/** Verifies against the stored hash, or burns the same work and answers false when there is none. */
export async function checkPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  if (!passwordHash) {
    await verifyPassword(DUMMY_HASH, password);
    return false;
  }
  return verifyPassword(passwordHash, password);
}
