import { Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Compute } from './constructs/compute';

/** What a function may do beyond reading and writing the table's items, which every function does. */
export type Need =
  /** sqs:SendMessage on the provisioning queue. */
  | 'sendProvisioning'
  /** sqs:SendMessage on the events queue. */
  | 'sendEvents'
  /** kms:Encrypt, kms:Decrypt, kms:GenerateDataKey on the data key (wallet keys, gateway tokens). */
  | 'dataKey'
  /** ecs:RunTask / StopTask / DescribeTasks in the platform cluster, iam:PassRole on the task's roles. */
  | 'runTasks';

/**
 * The single table of extra grants, function name → needs. A function not listed gets table data
 * access only. The provisioner's receive/delete rights on its queue come with its event source.
 */
export const NEEDS: Readonly<Record<string, readonly Need[]>> = {
  accounts: ['sendEvents'],
  settings: ['sendEvents'],
  agents: ['sendProvisioning', 'dataKey'],
  provision: ['sendProvisioning', 'dataKey'],
  instance: ['sendProvisioning', 'dataKey', 'runTasks'],
  wallet: ['dataKey'],
  provisioner: ['dataKey', 'runTasks'],
};

export interface GrantTargets {
  table: Table;
  provisioningQueue: Queue;
  eventsQueue: Queue;
  dataKey: Key;
  compute: Compute;
}

/** Applies the table to the functions; an entry naming no function is a mistake, so it throws. */
export function applyGrants(functions: ReadonlyMap<string, IFunction>, targets: GrantTargets) {
  for (const name of Object.keys(NEEDS)) {
    if (!functions.has(name)) throw new Error(`permissions table names an unknown function: ${name}`);
  }
  for (const [name, fn] of functions) {
    targets.table.grants.readWriteData(fn);
    for (const need of NEEDS[name] ?? []) grant(need, fn, targets);
  }
}

function grant(need: Need, fn: IFunction, t: GrantTargets) {
  switch (need) {
    case 'sendProvisioning':
      t.provisioningQueue.grants.actions(fn, ['sqs:SendMessage']);
      return;
    case 'sendEvents':
      t.eventsQueue.grants.actions(fn, ['sqs:SendMessage']);
      return;
    case 'dataKey':
      t.dataKey.grants.actions(fn, 'kms:Encrypt', 'kms:Decrypt', 'kms:GenerateDataKey');
      return;
    case 'runTasks': {
      const { cluster, taskDefinition } = t.compute;
      const inCluster = { ArnEquals: { 'ecs:cluster': cluster.clusterArn } };
      fn.addToRolePolicy(
        new PolicyStatement({ actions: ['ecs:RunTask'], resources: [taskDefinition.taskDefinitionArn], conditions: inCluster }),
      );
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['ecs:StopTask', 'ecs:DescribeTasks'],
          resources: [Stack.of(cluster).formatArn({ service: 'ecs', resource: 'task', resourceName: `${cluster.clusterName}/*` })],
          conditions: inCluster,
        }),
      );
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['iam:PassRole'],
          resources: t.compute.passableRoleArns(),
          conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
        }),
      );
      return;
    }
  }
}
