import { createHash } from 'node:crypto';
import {
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  ECSClient,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  StopTaskCommand,
} from '@aws-sdk/client-ecs';
import { EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LaunchError, type LaunchSpec } from '#adapters/launcher';
import { ecsLauncher } from '#adapters/launcher-ecs';
import { reloadConfig } from '#platform/config';

/** ECS has no emulator here, so the ECS launcher is checked against aws-sdk-client-mock (docs/architecture.md §7). */

const ecs = mockClient(ECSClient);
const kms = mockClient(KMSClient);
const CLUSTER = 'arn:aws:ecs:eu-west-1:123456789012:cluster/agents';
const TASK_DEF = 'arn:aws:ecs:eu-west-1:123456789012:task-definition/runtime:7';
const DEFAULT_IMAGE = 'agent-platform/runtime:local';

beforeAll(() => {
  reloadConfig({
    ECS_CLUSTER_ARN: CLUSTER,
    ECS_TASK_DEFINITION_ARN: TASK_DEF,
    ECS_SUBNET_IDS: 'subnet-a,subnet-b',
    ECS_SECURITY_GROUP_IDS: 'sg-runtime',
    KMS_KEY_ID: 'alias/agent-platform',
    APPROVED_RUNTIME_IMAGES: 'registry.example/runtime:2',
  });
});
afterAll(() => {
  ecs.restore();
  kms.restore();
  reloadConfig({
    ECS_CLUSTER_ARN: undefined,
    ECS_TASK_DEFINITION_ARN: undefined,
    ECS_SUBNET_IDS: undefined,
    ECS_SECURITY_GROUP_IDS: undefined,
    KMS_KEY_ID: undefined,
    APPROVED_RUNTIME_IMAGES: undefined,
  });
});
beforeEach(() => {
  ecs.reset();
  kms.reset();
  kms.on(EncryptCommand).resolves({ CiphertextBlob: Buffer.from('kms-ciphertext-of-the-token') });
});

const spec = (over: Partial<LaunchSpec> = {}): LaunchSpec => ({
  userId: 'u_ecs',
  idempotencyKey: 'u_ecs#3',
  generation: 3,
  image: DEFAULT_IMAGE,
  runtimeVersion: '1.4.0',
  gatewayToken: 'gw_plaintext-token-never-in-the-api-call',
  platformUrl: 'https://api.example.com',
  ...over,
});

const task = (over: Record<string, unknown> = {}) => ({
  taskArn: 'arn:aws:ecs:eu-west-1:123456789012:task/agents/abc',
  lastStatus: 'PROVISIONING',
  attachments: [{ type: 'ElasticNetworkInterface', details: [{ name: 'privateIPv4Address', value: '10.0.1.5' }] }],
  ...over,
});

describe('ECS launcher', () => {
  it('runs the task with an idempotent clientToken, the user group and the generation, and passes the token only KMS-encrypted', async () => {
    ecs.on(RunTaskCommand).resolves({ tasks: [task()], failures: [] });
    const handle = await ecsLauncher().launch(spec());
    expect(handle).toEqual({ launcher: 'ecs', id: task().taskArn, endpoint: 'http://10.0.1.5:8080' });

    const input = ecs.commandCalls(RunTaskCommand)[0]!.args[0].input;
    expect(input).toMatchObject({
      cluster: CLUSTER,
      taskDefinition: TASK_DEF,
      launchType: 'FARGATE',
      clientToken: createHash('sha256').update('u_ecs#3').digest('hex'),
      group: 'agent-platform:u_ecs',
      startedBy: 'gen-3',
      networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-a', 'subnet-b'], securityGroups: ['sg-runtime'], assignPublicIp: 'DISABLED' } },
    });
    expect(input.clientToken!.length).toBeLessThanOrEqual(64);
    const env = Object.fromEntries(input.overrides!.containerOverrides![0]!.environment!.map((e) => [e.name, e.value]));
    expect(env).toEqual({
      PLATFORM_URL: 'https://api.example.com',
      INSTANCE_USER_ID: 'u_ecs',
      RUNTIME_VERSION: '1.4.0',
      GATEWAY_TOKEN_KMS_CIPHERTEXT: Buffer.from('kms-ciphertext-of-the-token').toString('base64'),
      PORT: '8080',
    });
    expect(JSON.stringify(input)).not.toContain('gw_plaintext');
    expect(kms.commandCalls(EncryptCommand)[0]!.args[0].input).toMatchObject({
      KeyId: 'alias/agent-platform',
      EncryptionContext: { userId: 'u_ecs', purpose: 'runtime-bootstrap' },
    });

    // A redelivery of the same launch carries the same clientToken, so ECS starts no second task.
    await ecsLauncher().launch(spec());
    const tokens = ecs.commandCalls(RunTaskCommand).map((c) => c.args[0].input.clientToken);
    expect(new Set(tokens).size).toBe(1);
  });

  it('turns RunTask failures (no capacity) into a LaunchError for a retry', async () => {
    ecs.on(RunTaskCommand).resolves({ tasks: [], failures: [{ reason: 'RESOURCE:MEMORY', detail: 'no capacity' }] });
    await expect(ecsLauncher().launch(spec())).rejects.toThrow(LaunchError);
    await expect(ecsLauncher().launch(spec())).rejects.toThrow('RESOURCE:MEMORY');
  });

  it('runs another approved image through a registered revision of the task definition', async () => {
    ecs.on(DescribeTaskDefinitionCommand).resolves({
      taskDefinition: {
        family: 'runtime',
        containerDefinitions: [
          { name: 'runtime', image: DEFAULT_IMAGE, readonlyRootFilesystem: true, mountPoints: [{ sourceVolume: 'tmp', containerPath: '/tmp' }] },
          { name: 'sidecar', image: 'x' },
        ],
        volumes: [{ name: 'tmp' }],
        cpu: '512',
        memory: '1024',
      },
    });
    ecs.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: `${TASK_DEF}-v2` } });
    ecs.on(RunTaskCommand).resolves({ tasks: [task()] });
    await ecsLauncher().launch(spec({ image: 'registry.example/runtime:2' }));
    await ecsLauncher().launch(spec({ image: 'registry.example/runtime:2', idempotencyKey: 'u_ecs#4' }));
    const registered = ecs.commandCalls(RegisterTaskDefinitionCommand);
    expect(registered).toHaveLength(1);
    expect(registered[0]!.args[0].input.containerDefinitions).toEqual([
      { name: 'runtime', image: 'registry.example/runtime:2', readonlyRootFilesystem: true, mountPoints: [{ sourceVolume: 'tmp', containerPath: '/tmp' }] },
      { name: 'sidecar', image: 'x' },
    ]);
    // The revision keeps the volume its read-only container writes to, or ECS would refuse the mount.
    expect(registered[0]!.args[0].input.volumes).toEqual([{ name: 'tmp' }]);
    expect(ecs.commandCalls(RunTaskCommand).every((c) => c.args[0].input.taskDefinition === `${TASK_DEF}-v2`)).toBe(true);
  });

  it('locates the task (endpoint once running, reason once stopped) and stops it idempotently', async () => {
    const l = ecsLauncher();
    const handle = { launcher: 'ecs' as const, id: task().taskArn };
    ecs
      .on(DescribeTasksCommand)
      .resolvesOnce({ tasks: [task({ lastStatus: 'PENDING', attachments: [] })] })
      .resolvesOnce({ tasks: [task({ lastStatus: 'RUNNING' })] })
      .resolves({
        tasks: [task({ lastStatus: 'STOPPED', stoppedReason: 'Essential container exited' })],
      });
    expect((await l.locate(handle)).state).toBe('pending');
    expect(await l.locate(handle)).toEqual({ state: 'running', handle: { ...handle, endpoint: 'http://10.0.1.5:8080' } });
    expect(await l.locate(handle)).toMatchObject({ state: 'stopped', reason: 'Essential container exited' });

    ecs.on(StopTaskCommand).rejects(Object.assign(new Error('gone'), { name: 'InvalidParameterException' }));
    await expect(l.stop(handle, 'stopped by the owner')).resolves.toBeUndefined();
    expect(ecs.commandCalls(StopTaskCommand)[0]!.args[0].input).toMatchObject({ cluster: CLUSTER, task: handle.id, reason: 'stopped by the owner' });
  });
});

describe('ECS task size per plan (spec 2.16)', () => {
  it.each([
    [2048, '1024'],
    [8192, '1024'],
    [16384, '2048'],
  ])('a %i MiB plan runs the task with that memory and the CPU size Fargate requires for it', async (memoryMiB, cpu) => {
    ecs.on(RunTaskCommand).resolves({ tasks: [task()], failures: [] });
    await ecsLauncher().launch(spec({ memoryMiB, idempotencyKey: `u_ecs#mem${memoryMiB}` }));
    const input = ecs.commandCalls(RunTaskCommand)[0]!.args[0].input;
    expect(input.overrides).toMatchObject({ memory: String(memoryMiB), cpu });
  });
});
