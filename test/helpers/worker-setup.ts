import { inject } from 'vitest';
import { reloadConfig } from '#platform/config';
import { resetQueueClient } from '#adapters/queue';
import { resetDbClient } from '#data/client';
import { TEST_DB_REQUEST_TIMEOUT_MS } from './test-budgets';
import './localhost-names';
import { TEST_JWT_SECRET } from './test-secrets';

export { TEST_JWT_SECRET };

// A worker that runs several files in one process (a project with isolate: false) starts each file from
// the environment the worker started with: a setting one file changed never reaches the next.
const started = ((globalThis as { workerStartEnv?: NodeJS.ProcessEnv }).workerStartEnv ??= { ...process.env });
for (const name of Object.keys(process.env)) if (!(name in started)) delete process.env[name];
Object.assign(process.env, started);

const e = inject('emulators');
reloadConfig({
  STAGE: 'test',
  LOG_LEVEL: 'SILENT',
  TABLE_NAME: e.tableName,
  DYNAMODB_ENDPOINT: e.dynamoEndpoint,
  DYNAMODB_REQUEST_TIMEOUT_MS: TEST_DB_REQUEST_TIMEOUT_MS,
  SQS_ENDPOINT: e.sqsEndpoint,
  PROVISIONING_QUEUE_URL: e.provisioningQueueUrl,
  EVENTS_QUEUE_URL: e.eventsQueueUrl,
  JWT_SECRET: TEST_JWT_SECRET,
  APP_URL: 'http://127.0.0.1:3000',
  ADMIN_EMAILS: 'admin@example.com',
  TESTER_EMAILS: 'tester@example.com',
  // The stranded-work reconciler acts on every account of the table the test files share, so the
  // heartbeat runs it only in the fault tests that turn it on (test/*/fault-provisioning-crash.test.ts).
  PROVISIONING_REDRIVE_AFTER_SECONDS: '0',
});
resetDbClient();
resetQueueClient();
