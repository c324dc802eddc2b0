/** The parts of the CloudWatch Logs client the per-agent log reads with, loaded on its first read (adapters/runtime-logs-cloudwatch.ts; see aws-kms.ts for why). */
export { CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
