import { fileURLToPath } from 'node:url';

/**
 * The modules the functions' bundles take instead of a package (esbuild `alias`, build/bundling.ts):
 * bundles only; the local stack and the tests run the real packages.
 */

/**
 * Replaces the SDK's default credential chain with environment credentials only
 * (platform/aws/lambda-credentials.ts). A Lambda always receives its role's credentials as
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, so the SSO, INI, process,
 * web-identity and IMDS/container providers of `@aws-sdk/credential-provider-node` can never answer
 * there: they are dead weight, in every function (the baseline of bench/baseline.ts and
 * bench/results.json show what is left). Only the
 * bundles see the alias; the local stack and the tests run the sources with tsx and keep the full
 * chain. The path is absolute, so bundling must run locally (esbuild is a devDependency), not in
 * CDK's Docker fallback, where this path does not exist and the build would stop with an error.
 */
export const CREDENTIALS_SHIM = fileURLToPath(new URL('../platform/aws/lambda-credentials.ts', import.meta.url));
export const REPLACED_CREDENTIAL_PROVIDER = '@aws-sdk/credential-provider-node';

/**
 * zod's `z` is a namespace object (`export { z }` of `import * as z`), so a bundle that uses it, as
 * the AI SDK does (`import { z } from 'zod/v4'`), keeps every export of it, among them the
 * `locales` namespace: every language zod has. zod only ever installs `en` itself
 * (classic/schemas.js imports locales/en.js directly), and nothing here calls `z.config(z.locales.xx())`.
 * esbuild's alias rewrites package paths only, not zod's own relative `../locales/index.js`, so the
 * bundles swap the package entry instead: build/zod-lean re-exports zod's API with `locales`
 * (and `core.locales`) holding `en` alone (package sizes in bench/results.json).
 * An alias of `zod` also captures its subpaths, hence its own entry for `zod/v3` (below). Like the
 * credentials shim, bundles only; tests run the real zod.
 */
export const ZOD_WITHOUT_LOCALES = fileURLToPath(new URL('./zod-lean/index.ts', import.meta.url));
/** The `zod` alias would also capture `zod/mini` (and fail to resolve it as `build/zod-lean/index.ts/mini`): its own entry. */
export const ZOD_MINI = fileURLToPath(new URL('./zod-lean/mini.ts', import.meta.url));

/**
 * Two more swaps for the functions that call models (ai, gateway, agent chat): `zod/v3`, of which the
 * AI SDK uses one enum (build/stubs/zod-v3-kinds.ts), and `@ai-sdk/gateway`, the
 * default provider for bare string model ids, which this platform never passes (build/stubs/
 * ai-gateway.ts). Bundles only, like the zod alias: tests run the real packages.
 */
export const ZOD_V3 = fileURLToPath(new URL('./stubs/zod-v3-kinds.ts', import.meta.url));
export const AI_DEFAULT_PROVIDER = fileURLToPath(new URL('./stubs/ai-gateway.ts', import.meta.url));
