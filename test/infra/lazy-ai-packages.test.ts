import { beforeAll, describe, expect, it } from 'vitest';
import { buildAsDeployed, type DeployedBundle } from '../helpers/deployed-bundle';

/**
 * The functions that call models queue provisioning work (a spending cap pausing an instance) but
 * never launch one: only the provisioner selects a launcher. Queuing goes through
 * shared/adapters/provisioning-queue.ts, so their packages (all chunks, DESIGN §11: never over
 * 1 MB) carry the SQS client and not the ECS client or the launchers (issue 16).
 */

const MODEL_CALLERS = ['ai', 'runtime-model', 'gateway'] as const;
const LAUNCHING_ONLY = [
  'node_modules/@aws-sdk/client-ecs/',
  'shared/adapters/launcher-ecs.ts',
  'shared/adapters/launcher-local.ts',
  'shared/adapters/launcher.ts',
];

const bundles: Partial<Record<(typeof MODEL_CALLERS)[number], DeployedBundle>> = {};
beforeAll(async () => {
  for (const fn of MODEL_CALLERS) bundles[fn] = await buildAsDeployed(fn);
}, 120_000);

describe('the packages of the functions that call models', () => {
  it.each(MODEL_CALLERS)('%s can queue provisioning work but holds no launcher', (fn) => {
    const reachable = bundles[fn]!.reachable;
    expect(reachable).toContain('shared/ai/budget-actions.ts');
    expect(reachable).toContain('shared/adapters/provisioning-queue.ts');
    expect(reachable.some((i) => i.includes('node_modules/@aws-sdk/client-sqs/'))).toBe(true);
    expect(reachable.filter((i) => LAUNCHING_ONLY.some((part) => i.includes(part)))).toEqual([]);
  });
});
