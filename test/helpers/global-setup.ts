import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmulators } from '#local/emulators';

declare module 'vitest' {
  export interface ProvidedContext {
    emulators: { dynamoEndpoint: string; sqsEndpoint: string; provisioningQueueUrl: string; eventsQueueUrl: string; tableName: string };
    /** Where the run's functions, built as they deploy, are kept for every test file that inspects them. */
    deployedBundleDir: string;
  }
}

/**
 * One DynamoDB Local (in memory) and one SQS emulator for the whole run, on free loopback ports, and
 * one folder for the run's deploy-built functions (test/helpers/deployed-bundle.ts).
 */
export default async function setup(project: TestProject) {
  const deployedBundleDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-deployed-bundles-'));
  project.provide('deployedBundleDir', deployedBundleDir);
  const tableName = 'agent-platform-test';
  const emulators = await startEmulators({ tableName });
  project.provide('emulators', {
    dynamoEndpoint: emulators.dynamoEndpoint,
    sqsEndpoint: emulators.sqsEndpoint,
    provisioningQueueUrl: emulators.queueUrls.provisioning,
    eventsQueueUrl: emulators.queueUrls.events,
    tableName,
  });
  return async () => {
    await emulators.stop();
    rmSync(deployedBundleDir, { recursive: true, force: true });
  };
}
