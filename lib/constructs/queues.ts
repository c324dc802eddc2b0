import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Deliveries before a message is parked in the DLQ; the local emulators use the same count. */
export const MAX_RECEIVE_COUNT = 3;

export interface QueuesProps {
  /**
   * Timeout of the Lambda that consumes each queue. The visibility timeout is six times it, as AWS
   * advises for SQS event sources, so a message is not redelivered while a retried batch still runs.
   */
  consumerTimeout: Duration;
}

/** A work queue and its dead-letter queue. */
export class WorkQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, consumerTimeout: Duration) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'Dlq', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.queue = new Queue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(consumerTimeout.toSeconds() * 6),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
  }
}

/** The queues of DESIGN.md section 8: provisioning requests and account/settings events. */
export class Queues extends Construct {
  readonly provisioning: WorkQueue;
  readonly events: WorkQueue;

  constructor(scope: Construct, id: string, props: QueuesProps) {
    super(scope, id);
    this.provisioning = new WorkQueue(this, 'Provisioning', props.consumerTimeout);
    // No consumer is deployed for events yet; it is sized for a worker with the same timeout.
    this.events = new WorkQueue(this, 'Events', props.consumerTimeout);
  }
}
