import { randomBytes } from 'node:crypto';

/**
 * Password hashing: argon2id with the OWASP Password Storage Cheat Sheet's first configuration
 * (19 MiB of memory, 2 iterations, 1 lane), stored as a standard PHC string. The parameters travel
 * inside each string, so raising them later still verifies the hashes made with these.
 *
 * hash-wasm (WebAssembly) rather than a native addon: it bundles into the arm64 Lambdas with
 * esbuild like any other module, with no platform-specific binary to build or ship. It is imported on
 * the first password route of a container (./argon2.ts): the accounts function's other routes never load it.
 */
export const ARGON2_OPTIONS = { memorySize: 19456, iterations: 2, parallelism: 1, hashLength: 32, saltBytes: 16 } as const;

const argon2 = () => import('./argon2');

export const hashPassword = async (password: string): Promise<string> =>
  (await argon2()).argon2id({
    password,
    salt: randomBytes(ARGON2_OPTIONS.saltBytes),
    memorySize: ARGON2_OPTIONS.memorySize,
    iterations: ARGON2_OPTIONS.iterations,
    parallelism: ARGON2_OPTIONS.parallelism,
    hashLength: ARGON2_OPTIONS.hashLength,
    outputType: 'encoded',
  });

/** False for a wrong password and for a stored value that is not a valid hash; never throws for those. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  const { argon2Verify } = await argon2();
  try {
    return await argon2Verify({ password, hash: passwordHash });
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
