import { Duration, NestedStack } from 'aws-cdk-lib';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Function as Lambda } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { RouteGroup } from '#contract';
import { FIVE_MINUTE_SWEEP, MINUTE_SWEEP } from '#contract/sweeps';
import type { Concurrency, ConcurrencyFunction } from '../concurrency';
import type { FunctionIdentity } from '../settings';
import { FunctionBundles } from './function-bundles';
import { functionEntry, PlatformFunction, type FunctionNetwork } from './platform-function';
import type { Queues } from './queues';

/** API Gateway gives up on an integration after 29 s, so an HTTP function may not run longer. */
export const HTTP_TIMEOUT = Duration.seconds(29);
export const PROVISIONER_TIMEOUT = Duration.seconds(120);
export const PROVISIONER_DLQ_TIMEOUT = Duration.seconds(60);
export const HEARTBEAT_TIMEOUT = Duration.seconds(300);
export const TASK_EVENTS_TIMEOUT = Duration.seconds(60);
export const WEBHOOK_DELIVERY_TIMEOUT = Duration.seconds(60);

/** SQS batches: up to 10 records per invocation, each reported on its own when it fails. */
const SQS_BATCH = { batchSize: 10, reportBatchItemFailures: true } as const;

export interface WorkerSpec {
  name: string;
  /** Folder under functions/ when it is not `name` (two functions from one handler.ts). */
  folder?: string;
  handlerExport?: string;
  timeout: Duration;
  /** Invoked asynchronously (EventBridge): events that fail every retry go to the async dead-letter queue. */
  asynchronous?: boolean;
}

/** The functions that answer no HTTP route. */
export const WORKERS: readonly WorkerSpec[] = [
  { name: 'provisioner', timeout: PROVISIONER_TIMEOUT },
  { name: 'provisioner-dlq', folder: 'provisioner', handlerExport: 'dlqHandler', timeout: PROVISIONER_DLQ_TIMEOUT },
  { name: 'heartbeat', timeout: HEARTBEAT_TIMEOUT, asynchronous: true },
  { name: 'task-events', timeout: TASK_EVENTS_TIMEOUT, asynchronous: true },
  { name: 'webhook-delivery', timeout: WEBHOOK_DELIVERY_TIMEOUT },
];
export const WORKER_NAMES = WORKERS.map((w) => w.name);
/** The workers fed by an SQS event source (their reserved concurrency may not fall below the source's ceiling). */
export const QUEUE_CONSUMERS = ['provisioner', 'provisioner-dlq', 'webhook-delivery'] as const;

/** How monitoring and the concurrency settings name a group's response-streaming twin. */
export const streamingName = (group: string) => `${group}-streaming`;

/** Every function of the stack, streaming twins included, as the concurrency settings name them. */
export const concurrencyFunctions = (contract: readonly RouteGroup[]): ConcurrencyFunction[] => [
  ...platformFunctions(contract).map((fn) => ({ name: fn.name, streaming: false })),
  ...contract.filter((g) => g.streams).map((g) => ({ name: streamingName(g.group), streaming: true })),
];

/** Every function of the platform by name, marked HTTP or not (the settings routes need both). */
export const platformFunctions = (contract: readonly RouteGroup[]): FunctionIdentity[] => [
  ...contract.map((g) => ({ name: g.group, http: true })),
  ...WORKERS.map((w) => ({ name: w.name, http: false })),
];

export interface FunctionsProps {
  contract: readonly RouteGroup[];
  projectRoot: string;
  /** The whole environment of one function: platform/config.ts settings only, routed by the stack. */
  environmentOf: (fn: FunctionIdentity) => Record<string, string>;
  /** Set for the functions that must run in the VPC. */
  networkOf: (name: string) => FunctionNetwork | undefined;
  queues: Queues;
  clusterArn: string;
  /** Reserved concurrency per function and the SQS event sources' ceiling (lib/concurrency.ts). */
  concurrency: Concurrency;
}

/** Every Lambda of the platform: one per contract group, plus the workers and their triggers. */
export class Functions extends Construct {
  /** Keyed by contract group name or worker name. */
  readonly byName: ReadonlyMap<string, Lambda>;
  readonly http: ReadonlyMap<string, Lambda>;
  /**
   * The response-streaming twin of each contract group marked `streams`, keyed by group: the same
   * bundle, settings and permissions, called at its `streamHandler` export through a Function URL.
   */
  readonly streaming: ReadonlyMap<string, Lambda>;
  /**
   * Where asynchronous invocations end when every retry failed: events EventBridge could not
   * deliver and events the heartbeat or task-events function failed on. Watched by an alarm.
   */
  readonly asyncDeadLetters: Queue;
  /**
   * The nested stack that holds every function, role, policy, trigger and API integration: the
   * stateless bulk of the platform, kept out of the main stack's 500-resource budget
   * (docs/architecture.md §11). Log groups and the dead-letter queue hold data and stay here.
   */
  readonly home: NestedStack;
  /** Names of the functions invoked asynchronously (they have the dead-letter queue above). */
  readonly asynchronous: ReadonlySet<string> = new Set(WORKERS.filter((w) => w.asynchronous).map((w) => w.name));

  constructor(scope: Construct, id: string, props: FunctionsProps) {
    super(scope, id);
    this.home = new NestedStack(this, 'Handlers', { description: 'Agent platform: the functions, their roles, triggers and API integrations' });
    const home = this.home;
    this.asyncDeadLetters = new Queue(this, 'AsyncDeadLetters', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    // Every function's bundle is built in one go, the first time CDK asks for one.
    const folders = [...props.contract.map((g) => g.group), ...WORKERS.map((w) => w.folder ?? w.name)];
    const bundles = new FunctionBundles(folders.map((folder) => functionEntry(props.projectRoot, folder)));
    const byName = new Map<string, Lambda>();
    const http = new Map<string, Lambda>();
    const make = (spec: WorkerSpec, isHttp: boolean) => {
      if (byName.has(spec.name)) throw new Error(`two functions are named ${spec.name}`);
      const fn = new PlatformFunction(this, pascalCase(spec.name), {
        ...spec,
        projectRoot: props.projectRoot,
        environment: props.environmentOf({ name: spec.name, http: isHttp }),
        network: props.networkOf(spec.name),
        deadLetterQueue: spec.asynchronous ? this.asyncDeadLetters : undefined,
        reservedConcurrency: props.concurrency.reserved.get(spec.name),
        bundles,
        home,
      }).fn;
      byName.set(spec.name, fn);
      return fn;
    };

    for (const group of props.contract) http.set(group.group, make({ name: group.group, timeout: HTTP_TIMEOUT }, true));
    const streaming = new Map<string, Lambda>();
    for (const group of props.contract.filter((g) => g.streams)) {
      const fn = new PlatformFunction(this, `${pascalCase(group.group)}Streaming`, {
        name: group.group,
        handlerExport: 'streamHandler',
        streaming: true,
        timeout: HTTP_TIMEOUT,
        projectRoot: props.projectRoot,
        environment: props.environmentOf({ name: group.group, http: true }),
        network: props.networkOf(group.group),
        reservedConcurrency: props.concurrency.reserved.get(streamingName(group.group)),
        bundles,
        home,
      }).fn;
      streaming.set(group.group, fn);
    }
    const worker = Object.fromEntries(WORKERS.map((w) => [w.name, make(w, false)]));
    const { provisioning, events } = props.queues;
    // A ceiling on each event source, so a backlog drains at a bounded pace instead of taking the account's concurrency.
    const batches = { ...SQS_BATCH, ...(props.concurrency.queue !== undefined && { maxConcurrency: props.concurrency.queue }) };
    const sources = {
      provisioner: provisioning.queue,
      // Work given up after every retry: marks the launch failed and gives the quota back.
      'provisioner-dlq': provisioning.deadLetterQueue,
      'webhook-delivery': events.queue,
    } satisfies Record<(typeof QUEUE_CONSUMERS)[number], Queue>;
    for (const consumer of QUEUE_CONSUMERS) worker[consumer]!.addEventSource(new SqsEventSource(sources[consumer], batches));

    new Rule(home, 'HeartbeatSchedule', {
      description: 'Agent platform: heartbeat sweep of due instances',
      schedule: Schedule.rate(Duration.minutes(5)),
      targets: [new LambdaFunction(worker.heartbeat!, { deadLetterQueue: this.asyncDeadLetters, event: RuleTargetInput.fromObject(FIVE_MINUTE_SWEEP) })],
    });
    // Per-minute schedules run on time without running the health checks every minute too (docs/architecture.md §13).
    // A cron rule fires at the start of each minute; a rate rule at whatever second it was created,
    // which would make every scheduled prompt up to a minute late.
    new Rule(home, 'MinuteSweepSchedule', {
      description: 'Agent platform: scheduled prompts and idle auto-stop, every minute',
      schedule: Schedule.cron({ minute: '*' }),
      targets: [new LambdaFunction(worker.heartbeat!, { deadLetterQueue: this.asyncDeadLetters, event: RuleTargetInput.fromObject(MINUTE_SWEEP) })],
    });

    new Rule(home, 'TaskStateChanges', {
      description: "Agent platform: state changes of the platform cluster's tasks",
      eventPattern: {
        source: ['aws.ecs'],
        detailType: ['ECS Task State Change'],
        detail: { clusterArn: [props.clusterArn] },
      },
      targets: [new LambdaFunction(worker['task-events']!, { deadLetterQueue: this.asyncDeadLetters })],
    });

    this.byName = byName;
    this.http = http;
    this.streaming = streaming;
  }
}

/** `agent-chat` → `AgentChat`: construct ids, hence readable logical ids in the template. */
export const pascalCase = (name: string) => name.replace(/(^|-)([a-z0-9])/g, (_, _dash: string, c: string) => c.toUpperCase());
