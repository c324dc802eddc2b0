import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stand-in for `@aws-sdk/credential-provider-node` in the Lambda bundles only (esbuild alias in
 * build/bundling.ts); the local stack and the tests run the sources with tsx and keep the full chain.
 *
 * Why: Lambda always hands a function its role's credentials as AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, so the rest of the default chain (SSO, INI files,
 * credential processes, web identity, container and IMDS endpoints) can never answer there and only
 * weighs on the bundle and its cold start: 333 KB → 201 KB for a bundle holding only the DynamoDB
 * document client, about 130 KB off every function.
 *
 * Same export name and call shape as the module it replaces: every client's runtime config calls
 * `defaultProvider(clientConfig)` and signs with what the returned provider resolves.
 */
export const defaultProvider: typeof fromEnv = (init) => fromEnv(init);
