import type { TestProject } from 'vitest/node';
import { startEmulators } from '#local/emulators';

declare module 'vitest' {
  export interface ProvidedContext {
    emulators: { dynamoEndpoint: string; sqsEndpoint: string; provisioningQueueUrl: string; eventsQueueUrl: string; tableName: string };
  }
}

/** One DynamoDB Local (in memory) and one SQS emulator for the whole run, on free loopback ports. */
export default async function setup(project: TestProject) {
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
  };
}
