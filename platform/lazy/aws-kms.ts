/**
 * The parts of the KMS client the platform uses, loaded with `await import()` on first use
 * (platform/crypto/key-providers.ts, adapters/launcher-ecs.ts) so that no function pays for
 * the client at cold start. Named re-exports keep esbuild's tree-shaking; a dynamic
 * import of the package itself would pull all of it into the lazy chunk.
 */
export { DecryptCommand, EncryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
