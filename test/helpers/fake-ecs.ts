import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback ECS and KMS speaking the AWS JSON 1.1 wire format the SDK uses (POST `/`, the
 * operation in `X-Amz-Target`, blobs as base64): ECS RunTask, DescribeTasks and StopTask for the
 * ECS launcher; KMS GenerateDataKey, Decrypt and Encrypt for envelope encryption and the runtime's
 * bootstrap token. Each task started gets the ENI address `taskIp`, and is RUNNING once started.
 */

export interface FakeTask {
  taskArn: string;
  lastStatus: 'PROVISIONING' | 'RUNNING' | 'STOPPED';
  desiredStatus: 'RUNNING' | 'STOPPED';
  group?: string;
  startedBy?: string;
  clientToken?: string;
  stoppedReason?: string;
}

export interface FakeEcs {
  endpoint: string;
  tasks: Map<string, FakeTask>;
  /** Every call: the operation (`RunTask`, `Encrypt`...) and its JSON input. */
  calls: { operation: string; input: Record<string, any> }[];
  close(): Promise<void>;
}

const CLUSTER_PREFIX = 'arn:aws:ecs:us-east-1:123456789012:task/agents/';

export async function startFakeEcs(taskIp: string): Promise<FakeEcs> {
  const tasks = new Map<string, FakeTask>();
  const calls: FakeEcs['calls'] = [];
  const dataKeys = new Map<string, string>();

  const taskView = (t: FakeTask) => ({
    ...t,
    attachments: [{ type: 'ElasticNetworkInterface', details: [{ name: 'privateIPv4Address', value: taskIp }] }],
  });

  const operations: Record<string, (input: Record<string, any>) => [number, unknown]> = {
    RunTask: (input) => {
      const existing = [...tasks.values()].find((t) => t.clientToken && t.clientToken === input.clientToken);
      const task = existing ?? {
        taskArn: `${CLUSTER_PREFIX}${randomUUID().replaceAll('-', '')}`,
        lastStatus: 'RUNNING' as const,
        desiredStatus: 'RUNNING' as const,
        group: input.group,
        startedBy: input.startedBy,
        clientToken: input.clientToken,
      };
      tasks.set(task.taskArn, task);
      return [200, { tasks: [taskView(task)], failures: [] }];
    },
    DescribeTasks: (input) => {
      const found = (input.tasks as string[]).map((arn) => tasks.get(arn)).filter((t): t is FakeTask => !!t);
      const failures = (input.tasks as string[]).filter((arn) => !tasks.has(arn)).map((arn) => ({ arn, reason: 'MISSING' }));
      return [200, { tasks: found.map(taskView), failures }];
    },
    StopTask: (input) => {
      const task = tasks.get(input.task);
      if (!task) return [400, { __type: 'InvalidParameterException', message: 'The referenced task was not found.' }];
      Object.assign(task, { lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stoppedReason: input.reason });
      return [200, { task: taskView(task) }];
    },
    GenerateDataKey: (input) => {
      const plaintext = randomBytes(32).toString('base64');
      const blob = randomBytes(48).toString('base64');
      dataKeys.set(blob, plaintext);
      return [200, { KeyId: input.KeyId, Plaintext: plaintext, CiphertextBlob: blob }];
    },
    Decrypt: (input) => {
      const plaintext = dataKeys.get(input.CiphertextBlob);
      if (!plaintext) return [400, { __type: 'InvalidCiphertextException', message: 'unknown ciphertext' }];
      return [200, { KeyId: input.KeyId, Plaintext: plaintext }];
    },
    Encrypt: (input) => {
      const blob = randomBytes(48).toString('base64');
      dataKeys.set(blob, input.Plaintext);
      return [200, { KeyId: input.KeyId, CiphertextBlob: blob }];
    },
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const operation =
        String(req.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? '';
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, any>;
      calls.push({ operation, input });
      const handle = operations[operation];
      const [status, body] = handle ? handle(input) : [400, { __type: 'UnknownOperationException', message: operation }];
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tasks,
    calls,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
