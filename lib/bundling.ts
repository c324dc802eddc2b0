import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';

/**
 * How every Lambda of the platform is bundled (docs/architecture.md §11), in one place: PlatformFunction
 * hands these settings to CDK's NodejsFunction, and the bench (bench/bundle.ts) builds with the same
 * object, so the sizes it reports are the sizes that deploy. Plain esbuild options, no CDK import,
 * so the bench loads nothing but esbuild.
 */

/** Lets the bundled SDK and other CommonJS dependencies `require` Node built-ins from the ESM bundle. */
export const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * Replaces the SDK's default credential chain with environment credentials only
 * (shared/aws/lambda-credentials.ts). A Lambda always receives its role's credentials as
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, so the SSO, INI, process,
 * web-identity and IMDS/container providers of `@aws-sdk/credential-provider-node` can never answer
 * there: they are dead weight. Measured here: 333 KB → 201 KB for a bundle holding only the
 * DynamoDB document client (bench/baseline.ts), about 130 KB off every function. Only the
 * bundles see the alias; the local stack and the tests run the sources with tsx and keep the full
 * chain. The path is absolute, so bundling must run locally (esbuild is a devDependency), not in
 * CDK's Docker fallback, where this path does not exist and the build would stop with an error.
 */
export const CREDENTIALS_SHIM = fileURLToPath(new URL('../shared/aws/lambda-credentials.ts', import.meta.url));
export const REPLACED_CREDENTIAL_PROVIDER = '@aws-sdk/credential-provider-node';

/** The esbuild settings of every function bundle; callers add entryPoints and outfile. */
export const LAMBDA_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  // Prefer the ESM builds of dependencies: they tree-shake, the CommonJS ones do not.
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_BANNER },
  // An external source map: stack traces need only the mappings, the sources would double the asset.
  sourcemap: true,
  sourcesContent: false,
  // The AWS SDK is bundled, not taken from the runtime: pinned versions, and only what is used.
  external: [],
  alias: { [REPLACED_CREDENTIAL_PROVIDER]: CREDENTIALS_SHIM },
} satisfies BuildOptions;
