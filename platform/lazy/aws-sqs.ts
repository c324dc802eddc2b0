/** The parts of the SQS client the platform sends with, loaded on the first send (adapters/queue.ts; see aws-kms.ts for why). */
export { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
