/**
 * The local stand-ins for what AWS runs beside the HTTP API: SQS event source mappings (the
 * provisioning queue and its DLQ into the provisioner, the events queue into webhook delivery)
 * and the heartbeat's EventBridge schedule. Each calls the same handler the Lambda runs. On start
 * and on every heartbeat tick the instance records are reconciled with the processes that run
 * (local/reconcile.ts), standing in for ECS task state events.
 */
import { ChangeMessageVisibilityBatchCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { localLauncher } from '#adapters/launcher-local';
import { sqs } from '#adapters/queue';
import { heartbeatConfig, instanceConfig } from '#platform/config';
import { logger } from '#http/logger';
import type { Emulators } from './emulators';
import { startLocalHealing } from './heal';
import { reconcileLocalInstances } from './reconcile';

type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

export async function startLocalWorkers(emulators: Emulators) {
  const startedAt = new Date();
  const provisioner = (await import('#functions/workers/provisioner/handler')) as { handler: SqsHandler; dlqHandler: SqsHandler };
  const webhookDelivery = (await import('#functions/workers/webhook-delivery/handler')) as { handler: SqsHandler };
  const pollers = [
    pollQueue(emulators.queueUrls.provisioning, provisioner.handler),
    pollQueue(emulators.dlqUrls.provisioning, provisioner.dlqHandler),
    pollQueue(emulators.queueUrls.events, webhookDelivery.handler),
  ];
  const heartbeat = heartbeatTimer(heartbeatConfig().tickMs);
  const reconciled = await reconcileLocalInstances('relaunch');
  if (reconciled.relaunched) logger().info('relaunching the instances that were running before the stack stopped', { ...reconciled });
  const healing = await startLocalHealing(startedAt);
  return {
    reconciled,
    /** Stops polling, the heartbeat timer, then the runtime processes this stack started. */
    async stop() {
      healing.stop();
      await Promise.all([...pollers.map((p) => p.stop()), heartbeat.stop()]);
      if (instanceConfig().launcher === 'local') await localLauncher().stopAll();
    },
  };
}

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
export function pollQueue(queueUrl: string, handle: (event: SQSEvent) => Promise<SQSBatchResponse>) {
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
    if (done.length) await (await sqs()).send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries(done) }));
    if (retry.length) {
      await (await sqs()).send(
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
        const out = await (await sqs()).send(
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

/** One run at a time: a tick that finds the previous run still checking instances is skipped. */
function heartbeatTimer(tickMs: number) {
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return;
    running = import('#functions/workers/heartbeat/handler')
      .then((m) => m.handler())
      .then(() => reconcileLocalInstances('mark-dead'))
      .then(
        () => undefined,
        (err) => logger().error('heartbeat run failed', err as Error),
      )
      .finally(() => {
        running = undefined;
      });
  };
  // Ticks fall just after each multiple of tickMs on the wall clock (the minute for the default), as
  // EventBridge's cron rule fires in AWS: a schedule due at 10:05:00 runs at about 10:05:01, not up to
  // a whole tick late depending on when the stack started.
  let timer: NodeJS.Timeout | undefined;
  const first = setTimeout(
    () => {
      tick();
      timer = setInterval(tick, tickMs);
    },
    tickMs - (Date.now() % tickMs) + Math.min(1000, Math.floor(tickMs / 10)),
  );
  return {
    async stop() {
      clearTimeout(first);
      clearInterval(timer);
      if (running) await Promise.race([running, new Promise((r) => setTimeout(r, 2000))]);
    },
  };
}
