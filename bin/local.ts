/**
 * `npm start`: the whole platform on one machine with no AWS account. DynamoDB Local and the SQS
 * emulator start on loopback, the table and queues are created, and every contract route is
 * served on http://127.0.0.1:$PORT through the same Lambda handlers that run in AWS.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ConfigError, localSettings, reloadConfig } from '../shared/config';
import { resetQueueClient } from '../shared/adapters/queue';
import { resetDbClient } from '../shared/db/client';
import { logger } from '../shared/http/logger';
import { loadGroupHandler } from './handlers';
import { startEmulators } from './local-emulators';
import { createLocalServer } from './local-server';
// --- issue 5 (agents): provisioning queue pollers and local instances ---
import { DeleteMessageBatchCommand, ReceiveMessageCommand, ChangeMessageVisibilityBatchCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { sqs } from '../shared/adapters/queue';
import { localLauncher } from '../shared/adapters/launcher-local';
import { config } from '../shared/config';
// --- end issue 5 ---

const progress = (msg: string) => process.stderr.write(`[local] ${msg}\n`);

/** A JWT secret is generated once into the data folder, so sessions survive restarts. */
function ensureJwtSecret(dataDir: string): string {
  if (process.env.JWT_SECRET !== undefined) return process.env.JWT_SECRET;
  const file = path.join(dataDir, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  progress(`generated a JWT secret into ${file}`);
  return secret;
}

async function main() {
  const settings = localSettings();
  const dataDir = path.resolve(settings.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const jwtSecret = ensureJwtSecret(dataDir);
  // Validate the operator's settings before starting anything (a short JWT_SECRET refuses to start).
  reloadConfig({ JWT_SECRET: jwtSecret, STAGE: 'local' });

  progress('starting DynamoDB Local and the SQS emulator…');
  const emulators = await startEmulators({
    dataDir: path.join(dataDir, 'dynamodb'),
    tableName: process.env.TABLE_NAME ?? 'agent-platform',
    dynamoPort: settings.DYNAMODB_LOCAL_PORT,
  });
  progress(`DynamoDB Local at ${emulators.dynamoEndpoint}, SQS at ${emulators.sqsEndpoint}`);

  const server = createLocalServer(loadGroupHandler, (err) => logger().error('local server failure', err as Error));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(settings.PORT, settings.HOST, () => resolve());
    });
  } catch (err) {
    // Never leave DynamoDB Local (a Java process) behind when the port is taken.
    await emulators.stop();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new ConfigError(`port ${settings.PORT} is in use: stop the other server or set PORT`);
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://${settings.HOST}:${port}`;

  reloadConfig({
    STAGE: 'local',
    JWT_SECRET: jwtSecret,
    DYNAMODB_ENDPOINT: emulators.dynamoEndpoint,
    SQS_ENDPOINT: emulators.sqsEndpoint,
    PROVISIONING_QUEUE_URL: emulators.queueUrls.provisioning,
    EVENTS_QUEUE_URL: emulators.queueUrls.events,
    APP_URL: process.env.APP_URL ?? baseUrl,
    PROVISIONING_DLQ_URL: emulators.dlqUrls.provisioning, // issue 5: the DLQ is polled into the provisioner's dlqHandler
    // Plain http on loopback: browsers and curl would drop a Secure cookie here.
    COOKIE_SECURE: process.env.COOKIE_SECURE ?? 'false',
  });
  resetDbClient();
  resetQueueClient();

  // --- issue 5 (agents): poll the provisioning queue and its DLQ into the provisioner, as the SQS event sources do in AWS ---
  const provisioner = (await import('../functions/provisioner/handler')) as {
    handler: (e: SQSEvent) => Promise<SQSBatchResponse>;
    dlqHandler: (e: SQSEvent) => Promise<SQSBatchResponse>;
  };
  const pollers = [pollQueue(emulators.queueUrls.provisioning, provisioner.handler), pollQueue(emulators.dlqUrls.provisioning, provisioner.dlqHandler)];
  // --- end issue 5 ---

  // --- issue 6 (heartbeat): run the heartbeat handler every HEARTBEAT_TICK_MS, as the EventBridge schedule does in AWS ---
  const heartbeat = heartbeatTimer(config().heartbeat.tickMs);
  // --- end issue 6 ---

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    progress(`${signal}: stopping…`);
    // --- issue 5 (agents): stop polling, then the runtime processes this stack started ---
    await Promise.all(pollers.map((p) => p.stop()));
    if (config().launcher === 'local') await localLauncher().stopAll();
    // --- end issue 5 ---
    // --- issue 6 (heartbeat): clear the timer and let a run in progress finish (bounded) ---
    await heartbeat.stop();
    // --- end issue 6 ---
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await emulators.stop();
    progress('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  process.stdout.write(`ready: ${baseUrl}\n`);
}

// --- issue 5 (agents): the local stand-in for the SQS → Lambda event source mapping ---

/** Batches in flight at once, like the concurrent invocations of the provisioner Lambda. */
const POLL_CONCURRENCY = 4;
/** Long enough for a launch and its health wait (AWS: six times the function timeout). */
const LOCAL_VISIBILITY_SECONDS = 180;
/** A failed record is offered again after this pause instead of the whole visibility timeout. */
const LOCAL_RETRY_SECONDS = 3;

const toRecord = (queueUrl: string, m: Message): SQSRecord => ({
  messageId: m.MessageId!,
  receiptHandle: m.ReceiptHandle!,
  body: m.Body ?? '',
  attributes: {
    ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
    SentTimestamp: m.Attributes?.SentTimestamp ?? String(Date.now()),
    SenderId: m.Attributes?.SenderId ?? 'local',
    ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: m.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: `arn:aws:sqs:local:000000000000:${queueUrl.split('/').pop()}`,
  awsRegion: 'local',
});

/** ReceiveMessage long-poll → handler({Records}) → delete what is not in batchItemFailures. */
function pollQueue(queueUrl: string, handle: (event: SQSEvent) => Promise<SQSBatchResponse>) {
  const abort = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let stopped = false;

  const runBatch = async (messages: Message[]) => {
    let failed = new Set(messages.map((m) => m.MessageId!));
    try {
      const result = await handle({ Records: messages.map((m) => toRecord(queueUrl, m)) });
      failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
    } catch (err) {
      logger().error('queue handler threw; the batch will be redelivered', err as Error);
    }
    const done = messages.filter((m) => !failed.has(m.MessageId!));
    const retry = messages.filter((m) => failed.has(m.MessageId!));
    const entries = (list: Message[]) => list.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! }));
    if (done.length) await sqs().send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries(done) }));
    if (retry.length) {
      await sqs().send(
        new ChangeMessageVisibilityBatchCommand({ QueueUrl: queueUrl, Entries: entries(retry).map((e) => ({ ...e, VisibilityTimeout: LOCAL_RETRY_SECONDS })) }),
      );
    }
  };

  const loop = (async () => {
    while (!stopped) {
      try {
        if (inFlight.size >= POLL_CONCURRENCY) {
          await Promise.race(inFlight);
          continue;
        }
        const out = await sqs().send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 5,
            VisibilityTimeout: LOCAL_VISIBILITY_SECONDS,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        if (!out.Messages?.length) continue;
        const batch = runBatch(out.Messages).catch((err) => logger().error('queue bookkeeping failed', err as Error));
        inFlight.add(batch);
        void batch.finally(() => inFlight.delete(batch));
      } catch (err) {
        if (stopped) break;
        logger().error('queue poll failed', err as Error);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      abort.abort();
      await loop;
      // A launch still waiting for health is not waited for: its message stays queued for the next start.
      await Promise.race([Promise.all(inFlight), new Promise((r) => setTimeout(r, 2000))]);
    },
  };
}
// --- end issue 5 ---

// --- issue 6 (heartbeat): the local stand-in for the heartbeat's EventBridge schedule ---

/** One run at a time: a tick that finds the previous run still checking instances is skipped. */
function heartbeatTimer(tickMs: number) {
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return;
    running = import('../functions/heartbeat/handler')
      .then((m) => m.handler())
      .then(
        () => undefined,
        (err) => logger().error('heartbeat run failed', err as Error),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, tickMs);
  return {
    async stop() {
      clearInterval(timer);
      if (running) await Promise.race([running, new Promise((r) => setTimeout(r, 2000))]);
    },
  };
}
// --- end issue 6 ---

main().catch((err) => {
  const msg = err instanceof ConfigError ? err.message : (err as Error)?.stack ?? String(err);
  process.stderr.write(`[local] failed to start: ${msg}\n`);
  process.exit(1);
});
