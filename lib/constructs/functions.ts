import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { RouteGroup } from '../../shared/contract';
import { PlatformFunction } from './platform-function';

/** API Gateway gives up on an integration after 29 s, so an HTTP function may not run longer. */
export const HTTP_TIMEOUT = Duration.seconds(29);
export const PROVISIONER_TIMEOUT = Duration.seconds(120);
export const HEARTBEAT_TIMEOUT = Duration.seconds(300);
export const TASK_EVENTS_TIMEOUT = Duration.seconds(60);

/** The functions that answer no HTTP route; each lives in functions/<name>/handler.ts. */
export const WORKERS = ['provisioner', 'heartbeat', 'task-events'] as const;
export type WorkerName = (typeof WORKERS)[number];

export interface FunctionsProps {
  contract: readonly RouteGroup[];
  projectRoot: string;
  /** Settings every function reads (shared/config.ts). */
  environment: Record<string, string>;
  /** Settings only the HTTP functions read: the JWT secret stays out of the workers. */
  httpEnvironment: Record<string, string>;
  provisioningQueue: IQueue;
  clusterArn: string;
}

/** Every Lambda of the platform: one per contract group, plus the workers and their triggers. */
export class Functions extends Construct {
  /** Keyed by contract group name or worker name. */
  readonly byName: ReadonlyMap<string, NodejsFunction>;
  readonly http: ReadonlyMap<string, NodejsFunction>;

  constructor(scope: Construct, id: string, props: FunctionsProps) {
    super(scope, id);
    const byName = new Map<string, NodejsFunction>();
    const http = new Map<string, NodejsFunction>();
    const make = (name: string, timeout: Duration, environment: Record<string, string>) => {
      if (byName.has(name)) throw new Error(`two functions are named ${name}`);
      const fn = new PlatformFunction(this, pascalCase(name), { name, projectRoot: props.projectRoot, timeout, environment }).fn;
      byName.set(name, fn);
      return fn;
    };

    for (const group of props.contract) {
      http.set(group.group, make(group.group, HTTP_TIMEOUT, { ...props.environment, ...props.httpEnvironment }));
    }

    const provisioner = make('provisioner', PROVISIONER_TIMEOUT, props.environment);
    provisioner.addEventSource(new SqsEventSource(props.provisioningQueue, { batchSize: 10, reportBatchItemFailures: true }));

    const heartbeat = make('heartbeat', HEARTBEAT_TIMEOUT, props.environment);
    new Rule(this, 'HeartbeatSchedule', {
      description: 'Agent platform: heartbeat sweep of due instances',
      schedule: Schedule.rate(Duration.minutes(5)),
      targets: [new LambdaFunction(heartbeat)],
    });

    const taskEvents = make('task-events', TASK_EVENTS_TIMEOUT, props.environment);
    new Rule(this, 'TaskStateChanges', {
      description: "Agent platform: state changes of the platform cluster's tasks",
      eventPattern: {
        source: ['aws.ecs'],
        detailType: ['ECS Task State Change'],
        detail: { clusterArn: [props.clusterArn] },
      },
      targets: [new LambdaFunction(taskEvents)],
    });

    this.byName = byName;
    this.http = http;
  }
}

/** `agent-chat` → `AgentChat`: construct ids, hence readable logical ids in the template. */
const pascalCase = (name: string) => name.replace(/(^|-)([a-z0-9])/g, (_, _dash: string, c: string) => c.toUpperCase());
