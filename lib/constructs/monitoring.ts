import { Duration, NestedStack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { HttpCodeElb, HttpCodeTarget, type IApplicationLoadBalancer, type IApplicationTargetGroup } from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription, UrlSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, METRICS_SERVICE, PLATFORM_METRICS, type PlatformMetric } from '#platform/metrics';

/** Alarm thresholds, in one place so the operator can see what pages them. */
export const ALARM_THRESHOLDS = {
  /** Percent of API requests answered 5xx over five minutes. */
  api5xxPercent: 5,
  /** Percent of the agent edge's requests answered 5xx (by the edge or its load balancer) over five minutes. */
  edge5xxPercent: 5,
  /** Open connections through the agent edge's load balancer (five-minute maximum): well past a busy day, short of the per-task caps. */
  edgeConnections: 20_000,
  /** Seconds the oldest provisioning request may wait (a launch takes about a minute). */
  provisioningOldestSeconds: 15 * 60,
} as const;

/** The operations the platform runs against its table (CloudWatch alarms take at most 10 metrics in an expression). */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.QUERY,
  Operation.BATCH_GET_ITEM,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
  Operation.TRANSACT_GET_ITEMS,
];

export interface MonitoringProps {
  httpApi: HttpApi;
  functions: ReadonlyMap<string, IFunction>;
  /** Every dead-letter queue of the stack, by a readable name. */
  deadLetterQueues: Record<string, IQueue>;
  provisioningQueue: IQueue;
  table: ITable;
  /** The agent edge's load balancer and its target group (lib/constructs/edge.ts). */
  edge?: { loadBalancer: IApplicationLoadBalancer; targetGroup: IApplicationTargetGroup };
  /** CDK context `alarmEmail` (comma-separated): addresses subscribed to the alarm topic. */
  alarmEmail?: string;
  /** CDK context `alarmWebhookUrl` (comma-separated HTTPS URLs): endpoints subscribed to the alarm topic. */
  alarmWebhookUrl?: string;
}

const listOf = (csv: string | undefined) =>
  (csv ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);

const FIVE_MINUTES = Duration.minutes(5);

/** A business metric as the functions emit it (platform/metrics.ts). */
export const platformMetric = (metricName: PlatformMetric, statistic = 'Sum') =>
  new Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service: METRICS_SERVICE }, statistic, period: FIVE_MINUTES });

/**
 * What an operator watches: alarms on every failure the platform can hide (parked messages, stuck
 * launches, 5xx, function errors and throttles, DynamoDB throttling and errors), optionally mailed
 * through SNS, and one dashboard of the platform's traffic and business metrics.
 */
export class Monitoring extends Construct {
  readonly alarms: Alarm[] = [];
  /** Every alarm's action: the one place a subscriber (mail, a paging service, a chat integration) hears of any of them. */
  readonly topic: Topic;
  readonly dashboard: Dashboard;
  /**
   * The alarms and the dashboard: one alarm per function grows with every function, so they live in
   * a nested stack of their own (docs/architecture.md §11). The topic stays in the main stack, so
   * its confirmed e-mail subscriptions survive.
   */
  readonly home: NestedStack;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const home = new NestedStack(this, 'Alarms', { description: 'Agent platform: alarms and the dashboard' });
    this.home = home;
    // Always there, so an alarm never fires into nothing and a subscriber can be added without a deploy.
    this.topic = new Topic(this, 'AlarmTopic', { displayName: 'Agent platform alarms', enforceSSL: true });
    for (const address of listOf(props.alarmEmail)) this.topic.addSubscription(new EmailSubscription(address));
    // SNS posts a SubscriptionConfirmation first: paging services confirm it themselves (docs/architecture.md, alarms).
    for (const url of listOf(props.alarmWebhookUrl)) this.topic.addSubscription(new UrlSubscription(url));
    const alarm = (alarmId: string, metric: IMetric, description: string, threshold: number, missing = TreatMissingData.NOT_BREACHING) => {
      const created = new Alarm(home, alarmId, {
        metric,
        alarmDescription: `Agent platform: ${description}`,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: missing,
      });
      // No OK action: every new alarm passes from INSUFFICIENT_DATA to OK on its first deploy, a notice per alarm.
      created.addAlarmAction(new SnsAction(this.topic));
      this.alarms.push(created);
      return created;
    };

    // Work that failed every retry is parked, never dropped: any parked message pages someone.
    for (const [name, queue] of Object.entries(props.deadLetterQueues)) {
      alarm(
        `${name}DeadLetters`,
        queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1) }),
        `messages in the ${name} dead-letter queue`,
        1,
      );
    }
    alarm(
      'ProvisioningBacklog',
      props.provisioningQueue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: FIVE_MINUTES }),
      `a provisioning request has waited over ${ALARM_THRESHOLDS.provisioningOldestSeconds} s`,
      ALARM_THRESHOLDS.provisioningOldestSeconds,
    );

    const requests = props.httpApi.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const serverErrors = props.httpApi.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
    const api5xxRate = new MathExpression({
      expression: 'IF(requests > 0, 100 * errors / requests, 0)',
      usingMetrics: { requests, errors: serverErrors },
      period: FIVE_MINUTES,
      label: 'API 5xx %',
    });
    alarm('Api5xxRate', api5xxRate, `over ${ALARM_THRESHOLDS.api5xxPercent}% of API requests answered 5xx`, ALARM_THRESHOLDS.api5xxPercent);

    for (const [name, fn] of props.functions) {
      const id = name.replace(/(^|-)([a-z0-9])/g, (_, _dash: string, c: string) => c.toUpperCase());
      // One alarm per function over errors + throttles: two would cost a resource each, and the
      // stack must stay under CloudFormation's 500 resources as groups split into more functions
      // (docs/architecture.md §11). The description names both; the dashboard graphs them apart.
      const failures = new MathExpression({
        expression: 'errors + throttles',
        usingMetrics: {
          errors: fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
          throttles: fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
        },
        period: FIVE_MINUTES,
        label: `${name} errors + throttles`,
      });
      alarm(`${id}Failures`, failures, `the ${name} function failed or was throttled`, 1);
    }

    const tableThrottles = props.table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period: FIVE_MINUTES });
    const tableErrors = props.table.metricSystemErrorsForOperations({ operations: TABLE_OPERATIONS, period: FIVE_MINUTES });
    alarm('TableThrottles', tableThrottles, 'DynamoDB throttled requests of the platform table', 1);
    alarm('TableSystemErrors', tableErrors, 'DynamoDB system errors on the platform table', 1);

    alarm(
      'StuckProvisioning',
      platformMetric(PLATFORM_METRICS.stuckProvisioning, 'Maximum'),
      'instances in provisioning longer than every retry allows (heartbeat count)',
      1,
    );

    if (props.edge) {
      const { loadBalancer, targetGroup } = props.edge;
      const sum = { period: FIVE_MINUTES, statistic: 'Sum' };
      const edge5xxRate = new MathExpression({
        expression: 'IF(requests > 0, 100 * (lb + targets) / requests, 0)',
        usingMetrics: {
          requests: loadBalancer.metrics.requestCount(sum),
          lb: loadBalancer.metrics.httpCodeElb(HttpCodeElb.ELB_5XX_COUNT, sum),
          targets: loadBalancer.metrics.httpCodeTarget(HttpCodeTarget.TARGET_5XX_COUNT, sum),
        },
        period: FIVE_MINUTES,
        label: 'Edge 5xx %',
      });
      alarm('Edge5xxRate', edge5xxRate, `over ${ALARM_THRESHOLDS.edge5xxPercent}% of agent edge requests answered 5xx`, ALARM_THRESHOLDS.edge5xxPercent);
      alarm(
        'EdgeUnhealthyTargets',
        targetGroup.metrics.unhealthyHostCount({ period: Duration.minutes(1), statistic: 'Maximum' }),
        'an agent edge task failed its health check',
        1,
      );
      alarm(
        'EdgeConnections',
        loadBalancer.metrics.activeConnectionCount({ period: FIVE_MINUTES, statistic: 'Maximum' }),
        `over ${ALARM_THRESHOLDS.edgeConnections} open connections through the agent edge`,
        ALARM_THRESHOLDS.edgeConnections,
      );
    }

    const graph = (title: string, left: IMetric[], width = 12) => new GraphWidget({ title, left, width, height: 6 });
    this.dashboard = new Dashboard(home, 'Dashboard', { defaultInterval: Duration.hours(12) });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: '# Agent platform\nTraffic, launches, heartbeats and payments; every alarm of the stack is listed at the bottom.',
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph('API requests and errors', [requests, props.httpApi.metricClientError({ period: FIVE_MINUTES, statistic: 'Sum' }), serverErrors]),
      graph(
        'API latency (ms)',
        ['p50', 'p90', 'p99'].map((statistic) => props.httpApi.metricLatency({ period: FIVE_MINUTES, statistic })),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Provisions and launches',
        [PLATFORM_METRICS.launches, PLATFORM_METRICS.provisionsSucceeded, PLATFORM_METRICS.provisionsFailed].map((m) => platformMetric(m)),
      ),
      graph(
        'Heartbeat results',
        [PLATFORM_METRICS.heartbeatHealthy, PLATFORM_METRICS.heartbeatUnhealthy]
          .map((m) => platformMetric(m))
          .concat(platformMetric(PLATFORM_METRICS.stuckProvisioning, 'Maximum')),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Payments (card webhook events)',
        [PLATFORM_METRICS.paymentsApplied, PLATFORM_METRICS.paymentsNotApplied].map((m) => platformMetric(m)),
      ),
      graph('Queues', [
        props.provisioningQueue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
        props.provisioningQueue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
        ...Object.entries(props.deadLetterQueues).map(([name, q]) =>
          q.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum', label: `${name} DLQ` }),
        ),
      ]),
    );
    this.dashboard.addWidgets(
      graph(
        'Function errors',
        [...props.functions].map(([name, fn]) => fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum', label: name })),
        24,
      ),
    );
    // Two graphs: both expressions name their per-operation metrics alike, which one graph cannot hold.
    this.dashboard.addWidgets(graph('DynamoDB throttled requests', [tableThrottles]), graph('DynamoDB system errors', [tableErrors]));
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 8 }));
  }
}
