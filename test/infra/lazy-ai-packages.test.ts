import { beforeAll, describe, expect, it } from 'vitest';
import { buildAsDeployed, type DeployedBundle } from '../helpers/deployed-bundle';

/**
 * The functions that call models queue work when a spending cap is crossed but never do it
 * themselves: they queue provisioning (adapters/provisioning-queue.ts) and never launch an
 * instance, which only the provisioner does, and they queue the alert emails on the events queue
 * (adapters/email-queue.ts), whose worker sends them. So their packages (all chunks,
 * DESIGN §11: never over 1 MB) carry the SQS client and neither the ECS nor the SES client.
 */

const MODEL_CALLERS = ['ai', 'runtime-model', 'gateway'] as const;
const LAUNCHING_ONLY = ['node_modules/@aws-sdk/client-ecs/', 'adapters/launcher-ecs.ts', 'adapters/launcher-local.ts', 'adapters/launcher.ts'];
const MAILING_ONLY = ['node_modules/@aws-sdk/client-sesv2/', 'adapters/email-ses.ts', 'adapters/email.ts'];

const bundles: Partial<Record<(typeof MODEL_CALLERS)[number], DeployedBundle>> = {};
beforeAll(async () => {
  for (const fn of MODEL_CALLERS) bundles[fn] = await buildAsDeployed(fn);
}, 120_000);

describe('the packages of the functions that call models', () => {
  it.each(MODEL_CALLERS)('%s can queue provisioning work and emails but holds no launcher and no mail sender', (fn) => {
    const reachable = bundles[fn]!.reachable;
    expect(reachable).toContain('domain/ai/budget-actions.ts');
    expect(reachable).toContain('adapters/provisioning-queue.ts');
    expect(reachable).toContain('adapters/email-queue.ts');
    expect(reachable.some((i) => i.includes('node_modules/@aws-sdk/client-sqs/'))).toBe(true);
    expect(reachable.filter((i) => LAUNCHING_ONLY.some((part) => i.includes(part)))).toEqual([]);
    expect(reachable.filter((i) => MAILING_ONLY.some((part) => i.includes(part)))).toEqual([]);
  });

  it.each(['ai', 'runtime-model'] as const)('%s deploys under 1 MB, all chunks together (DESIGN §11)', (fn) => {
    const { metafile } = bundles[fn]!;
    const packageBytes = Object.entries(metafile.outputs)
      .filter(([name]) => name.endsWith('.mjs'))
      .reduce((sum, [, output]) => sum + output.bytes, 0);
    expect(packageBytes).toBeLessThan(1024 * 1024);
  });
});
