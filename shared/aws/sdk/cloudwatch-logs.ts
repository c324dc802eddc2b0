/** The parts of the CloudWatch Logs client the per-agent log reads with, loaded on its first read (shared/adapters/runtime-logs-cloudwatch.ts; see kms.ts for why). */
export { CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
