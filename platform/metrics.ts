import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { config } from './config';

/**
 * The platform's business metrics, as CloudWatch embedded metric format (EMF) documents written to
 * the function's log: CloudWatch extracts them, so emitting costs no API call. One namespace and one
 * `service` dimension for every function, so the dashboard and alarms (lib/constructs/monitoring.ts)
 * name each metric exactly as emitted.
 */

export const METRICS_NAMESPACE = 'AgentPlatform';
export const METRICS_SERVICE = 'agent-platform';

export const PLATFORM_METRICS = {
  /** A task or process was started for an instance generation (provisioner). */
  launches: 'InstanceLaunches',
  /** A launch ended with the instance running / in `error` (provisioner, its DLQ consumer). */
  provisionsSucceeded: 'ProvisionsSucceeded',
  provisionsFailed: 'ProvisionsFailed',
  /** Heartbeat checks of running instances, by result. */
  heartbeatHealthy: 'HeartbeatHealthy',
  heartbeatUnhealthy: 'HeartbeatUnhealthy',
  /** Instances in `provisioning` for longer than any retry could take (heartbeat, every run). */
  stuckProvisioning: 'InstancesStuckInProvisioning',
  /** Verified card webhook events: applied to a subscription, or not (duplicate, stale, unknown account). */
  paymentsApplied: 'PaymentEventsApplied',
  paymentsNotApplied: 'PaymentEventsNotApplied',
} as const;

export type PlatformMetric = (typeof PLATFORM_METRICS)[keyof typeof PLATFORM_METRICS];

/** One EMF document (what CloudWatch Logs parses). */
export type EmfDocument = ReturnType<Metrics['serializeMetrics']>;

let metrics: Metrics | undefined;
const listeners = new Set<(emf: EmfDocument) => void>();

/**
 * Emits counts in one EMF document. In AWS it goes to stdout, where Lambda ships it to CloudWatch
 * Logs; elsewhere only to listeners, so the local stack's and the tests' output stay readable.
 */
export function emitMetrics(counts: Partial<Record<PlatformMetric, number>>): void {
  const entries = Object.entries(counts).filter(([, value]) => value !== undefined) as [PlatformMetric, number][];
  if (!entries.length) return;
  metrics ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });
  for (const [name, value] of entries) metrics.addMetric(name, MetricUnit.Count, value);
  const emf = metrics.serializeMetrics();
  metrics.clearMetrics();
  if (config().stage === 'aws') process.stdout.write(`${JSON.stringify(emf)}\n`);
  for (const listener of listeners) listener(emf);
}

/** Receives every document emitted in this process until the returned function is called. */
export function onMetrics(listener: (emf: EmfDocument) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
