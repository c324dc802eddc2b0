import { fileURLToPath } from 'node:url';
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct, Node } from 'constructs';
import { contract } from '../shared/contract';
import { Api } from './constructs/api';
import { Compute } from './constructs/compute';
import { DataTable } from './constructs/data-table';
import { Functions, PROVISIONER_TIMEOUT } from './constructs/functions';
import { Keys } from './constructs/keys';
import { Queues } from './constructs/queues';
import { Secrets } from './constructs/secrets';
import { applyGrants } from './permissions';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Operator settings, read from CDK context. Defaults live in cdk.json; override any of them at
 * deploy time, e.g. `npx cdk deploy -c appUrl=https://app.example.com -c adminEmails=a@x.com,b@y.com`.
 * - appUrl: public URL of the web app (links in emails, OAuth redirects). Empty: the API's own URL.
 * - adminEmails / testerEmails: comma-separated accounts with admin rights / the tester bypass.
 * - runtimeImage: container image of the agent runtime the Fargate tasks run (ARM64).
 * - agentDomain: parent domain of the agents' subdomains.
 */
export interface PlatformSettings {
  appUrl: string;
  adminEmails: string;
  testerEmails: string;
  runtimeImage: string;
  agentDomain: string;
}

export function readSettings(node: Node): PlatformSettings {
  const text = (key: keyof PlatformSettings, required: boolean): string => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') {
      if (required) throw new Error(`CDK context "${key}" is required (set it in cdk.json or pass -c ${key}=...)`);
      return '';
    }
    if (typeof value !== 'string') throw new Error(`CDK context "${key}" must be a string`);
    return value.trim();
  };
  const settings: PlatformSettings = {
    appUrl: text('appUrl', false),
    adminEmails: text('adminEmails', false),
    testerEmails: text('testerEmails', false),
    runtimeImage: text('runtimeImage', true),
    agentDomain: text('agentDomain', true),
  };
  // Fail at synth rather than at the first cold start (shared/config.ts parses the same values).
  if (settings.appUrl && !URL.canParse(settings.appUrl)) throw new Error(`CDK context "appUrl" is not a URL: ${settings.appUrl}`);
  for (const key of ['adminEmails', 'testerEmails'] as const) {
    const bad = settings[key].split(',').map((e) => e.trim()).filter((e) => e && !/^[^@\s]+@[^@\s]+$/.test(e));
    if (bad.length) throw new Error(`CDK context "${key}" holds something that is not an email: ${bad.join(', ')}`);
  }
  return settings;
}

/** The whole platform of DESIGN.md section 1 in one stack. */
export class PlatformStack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const settings = readSettings(this.node);

    const data = new DataTable(this, 'Data');
    const queues = new Queues(this, 'Queues', { consumerTimeout: PROVISIONER_TIMEOUT });
    const keys = new Keys(this, 'Keys');
    const secrets = new Secrets(this, 'Secrets');
    const compute = new Compute(this, 'Compute', { runtimeImage: settings.runtimeImage });
    const api = new Api(this, 'Api');

    const functions = new Functions(this, 'Functions', {
      contract,
      projectRoot: PROJECT_ROOT,
      environment: {
        STAGE: 'aws',
        TABLE_NAME: data.table.tableName,
        PROVISIONING_QUEUE_URL: queues.provisioning.queue.queueUrl,
        EVENTS_QUEUE_URL: queues.events.queue.queueUrl,
        APP_URL: settings.appUrl || api.url,
        ADMIN_EMAILS: settings.adminEmails,
        TESTER_EMAILS: settings.testerEmails,
        KMS_KEY_ID: keys.dataKey.keyArn,
        ECS_CLUSTER_ARN: compute.cluster.clusterArn,
        ECS_TASK_DEFINITION_ARN: compute.taskDefinition.taskDefinitionArn,
        ECS_SUBNET_IDS: compute.subnetIds().join(','),
        ECS_SECURITY_GROUP_IDS: compute.securityGroup.securityGroupId,
        RUNTIME_IMAGE: settings.runtimeImage,
        AGENT_DOMAIN: settings.agentDomain,
      },
      httpEnvironment: { JWT_SECRET: secrets.jwtSecretReference() },
      provisioningQueue: queues.provisioning.queue,
      clusterArn: compute.cluster.clusterArn,
    });

    api.addContractRoutes(contract, (group) => {
      const fn = functions.http.get(group);
      if (!fn) throw new Error(`no function for contract group ${group}`);
      return fn;
    });

    applyGrants(functions.byName, {
      table: data.table,
      provisioningQueue: queues.provisioning.queue,
      eventsQueue: queues.events.queue,
      dataKey: keys.dataKey,
      compute,
    });

    new CfnOutput(this, 'ApiUrl', { value: api.url, description: 'Base URL of the platform API' });
  }
}
