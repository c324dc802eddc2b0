import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Deliveries before a message is parked in the DLQ; the local emulators use the same count. */
export const MAX_RECEIVE_COUNT = 3;

/**
 * A queue's visibility timeout is six times its consumer's Lambda timeout, as AWS advises for SQS
 * event sources, so a message is not redelivered while a retried batch still runs.
 */
export const visibilityFor = (consumerTimeout: Duration) => Duration.seconds(consumerTimeout.toSeconds() * 6);

export interface WorkQueueProps {
  consumerTimeout: Duration;
  /** Timeout of the dead-letter queue's consumer, if it has one; none leaves the SQS default. */
  deadLetterConsumerTimeout?: Duration;
}

/** A work queue and its dead-letter queue. */
export class WorkQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: WorkQueueProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'Dlq', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      ...(props.deadLetterConsumerTimeout && { visibilityTimeout: visibilityFor(props.deadLetterConsumerTimeout) }),
    });
    this.queue = new Queue(this, 'Queue', {
      visibilityTimeout: visibilityFor(props.consumerTimeout),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
  }
}

export interface QueuesProps {
  provisioning: WorkQueueProps;
  events: WorkQueueProps;
}

/** The queues of docs/architecture.md §8: provisioning requests and account/settings events. */
export class Queues extends Construct {
  readonly provisioning: WorkQueue;
  readonly events: WorkQueue;

  constructor(scope: Construct, id: string, props: QueuesProps) {
    super(scope, id);
    this.provisioning = new WorkQueue(this, 'Provisioning', props.provisioning);
    this.events = new WorkQueue(this, 'Events', props.events);
  }
}
