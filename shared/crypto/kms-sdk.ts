/**
 * The KMS commands key custody uses, loaded with `import()` by ./key-providers.ts. A dynamic import
 * of the SDK package itself keeps every export of it in the bundle (67 KB against 51 KB measured in
 * bench/dist/agents), because the namespace object is used whole; this module names only three.
 */
export { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
