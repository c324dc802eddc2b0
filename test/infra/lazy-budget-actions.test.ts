import { beforeAll, describe, expect, it } from 'vitest';
import { buildAsDeployed, type DeployedBundle } from '../helpers/deployed-bundle';

/**
 * Every function that meters a model call (the gateway, ai, agent-chat...) checks the spending caps
 * after the call (domain/ai/budget-guard.ts); what a crossed cap does (the emails, pausing an agent,
 * stopping the instance) is loaded by the first cap a container sees at 80 %, not at its cold start
 * Built as the gateway deploys: its own entry, code splitting.
 */

/** Only a crossed or raised cap needs these. */
const CROSSED_CAP_ONLY = ['domain/ai/budget-actions.ts', 'adapters/email-queue.ts', 'adapters/provisioning-queue.ts', 'data/instances.ts'];

let gateway: DeployedBundle;

beforeAll(async () => {
  gateway = await buildAsDeployed('gateway');
}, 60_000);

describe("the spending caps' actions in the gateway", () => {
  it('are not loaded at its cold start, while the check after each call is', () => {
    const atInit = gateway.atInit;
    expect(atInit).toContain('domain/ai/budget-guard.ts');
    expect(atInit.filter((i) => CROSSED_CAP_ONLY.includes(i))).toEqual([]);
  });

  it('are in its bundle, behind an import()', () => {
    const ever = gateway.reachable;
    for (const file of CROSSED_CAP_ONLY) expect(ever, file).toContain(file);
  });
});
