import { beforeAll, describe, expect, it } from 'vitest';
import { buildAllAsDeployed, type DeployedBundle } from '../helpers/deployed-bundle';

/**
 * Built with code splitting, as the functions deploy: the chain, passkey and remote-key-set
 * libraries are in each function's package but in lazy chunks only, never in what the entry file
 * imports statically, so a cold start of a route that does not use them does not load them.
 */
const LAZY_LIBRARIES = /node_modules\/(viem|@noble|@scure|abitype|ox|@adraffy|@simplewebauthn|@peculiar|asn1js)\/|node_modules\/jose\/dist\/webapi\/jwks\//;

/** Function → modules its package must still hold, lazily (so the check cannot pass on a bundle that lost them). */
const FUNCTIONS: Record<string, RegExp[]> = {
  wallet: [/viem\/_esm\/accounts\//, /viem\/_esm\/actions\/public\/getBalance/],
  'wallet-sign-in': [/viem\/_esm\/utils\/siwe\//, /viem\/_esm\/actions\/public\/call/],
  social: [/jose\/dist\/webapi\/jwks\/remote/, /viem\/_esm\/actions\/public\/readContract/],
  'agent-verification': [/@simplewebauthn\/server/, /@peculiar\/x509/, /viem\/_esm\/actions\/ens\/getEnsAddress/],
  skills: [/viem\/_esm\/accounts\//, /viem\/_esm\/actions\/public\/estimateGas/],
  gateway: [/viem\/_esm\/utils\/abi\/parseEventLogs/, /viem\/_esm\/utils\/address\/getAddress/],
  card: [],
};

let bundles: Record<string, DeployedBundle>;

beforeAll(async () => {
  bundles = await buildAllAsDeployed(Object.keys(FUNCTIONS));
}, 120_000);

/** The modules a cold start evaluates (the entry file and the chunks it imports statically), and all those of its package. */
const modulesOf = (fn: string) => ({ atInit: bundles[fn]!.atInit, packaged: bundles[fn]!.reachable });

describe('chain, passkey and remote key set libraries load on first use', () => {
  it.each(Object.keys(FUNCTIONS))('%s: none of them at init, each still in the package', (fn) => {
    const { atInit, packaged } = modulesOf(fn);
    expect(atInit.length).toBeGreaterThan(50);
    expect(atInit.filter((m) => LAZY_LIBRARIES.test(m))).toEqual([]);
    for (const lazy of FUNCTIONS[fn]!)
      expect(
        packaged.some((m) => lazy.test(m)),
        String(lazy),
      ).toBe(true);
  });
});
