import { config, awsFakesConfig } from '../config';
import { lazyClient } from '../lazy/aws-client';

/** The one KMS client of a process (data keys in platform/crypto, the runtime's bootstrap token in launcher-ecs.ts), loaded on its first call. */
export const kms = /* @__PURE__ */ lazyClient(
  () => import('../lazy/aws-kms'),
  (sdk) => new sdk.KMSClient({ region: config().region, maxAttempts: 3, ...awsFakesConfig().kms }),
);
