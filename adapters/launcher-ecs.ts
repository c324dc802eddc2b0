import { createHash } from 'node:crypto';
import type { Task } from '@aws-sdk/client-ecs';
import { kms } from '#platform/aws/kms-client';
import { lazyClient } from '#platform/lazy/aws-client';
import { awsFakesConfig, config, instanceConfig, keyCustodyConfig } from '#platform/config';
import { type LaunchHandle, LaunchError, RUNTIME_PORT, type Launcher, type LaunchSpec, type Located } from './launcher';

/**
 * Instances as ECS Fargate tasks of the task definition CDK declares (container `runtime`, port
 * 8080). RunTask's `clientToken` is derived from the launch's idempotency key, so a duplicate
 * delivery that slips past the idempotency record still starts one task.
 *
 * The gateway token reaches the task encrypted: KMS-encrypted under the platform key with the
 * encryption context {userId, purpose: 'runtime-bootstrap'} and passed as
 * GATEWAY_TOKEN_KMS_CIPHERTEXT; the runtime decrypts it with its task role (which needs
 * kms:Decrypt on that key, conditioned on that purpose). No platform secret is passed.
 *
 * The endpoint the platform reaches is the task's ENI private address: functions that talk to
 * instances must run in the cluster's VPC (or behind the operator's routing to the subdomain).
 */

export const RUNTIME_CONTAINER = 'runtime';
export const BOOTSTRAP_PURPOSE = 'runtime-bootstrap';

/** Loaded on the first launch, locate or stop: this module is reached only where the launcher is ECS. */
const ecsClient = /* @__PURE__ */ lazyClient(
  () => import('#platform/lazy/aws-ecs'),
  (sdk) => new sdk.ECSClient({ region: config().region, maxAttempts: 3, ...awsFakesConfig().ecs }),
);

/** Drops the ECS client so the next call builds it from the current settings (tests that point it at a fake). */
export const resetEcsClient = (): void => ecsClient.reset();

/** Task definitions registered for approved images other than the default, per container image. */
const taskDefinitions = new Map<string, Promise<string>>();

async function taskDefinitionFor(image: string): Promise<string> {
  const base = instanceConfig().ecs.taskDefinitionArn;
  if (!base) throw new LaunchError('ECS_TASK_DEFINITION_ARN is not set');
  if (image === instanceConfig().runtimeImage) return base;
  let arn = taskDefinitions.get(image);
  if (!arn) {
    arn = registerWithImage(base, image);
    taskDefinitions.set(image, arn);
    arn.catch(() => taskDefinitions.delete(image));
  }
  return arn;
}

/** A revision of the platform's task definition whose runtime container runs `image`. */
async function registerWithImage(baseArn: string, image: string): Promise<string> {
  const { client: ecs, sdk } = await ecsClient.get();
  const { taskDefinition: td } = await ecs.send(new sdk.DescribeTaskDefinitionCommand({ taskDefinition: baseArn }));
  if (!td?.family || !td.containerDefinitions) throw new LaunchError('base task definition not found');
  const out = await ecs.send(
    new sdk.RegisterTaskDefinitionCommand({
      family: td.family,
      containerDefinitions: td.containerDefinitions.map((c) => (c.name === RUNTIME_CONTAINER ? { ...c, image } : c)),
      // The writable scratch volume the read-only runtime container mounts at /tmp.
      volumes: td.volumes,
      cpu: td.cpu,
      memory: td.memory,
      networkMode: td.networkMode,
      requiresCompatibilities: td.requiresCompatibilities,
      executionRoleArn: td.executionRoleArn,
      taskRoleArn: td.taskRoleArn,
      runtimePlatform: td.runtimePlatform,
    }),
  );
  const arn = out.taskDefinition?.taskDefinitionArn;
  if (!arn) throw new LaunchError('task definition registration returned no ARN');
  return arn;
}

async function encryptedToken(spec: LaunchSpec): Promise<string> {
  const keyId = keyCustodyConfig().kmsKeyId;
  if (!keyId) throw new LaunchError('KMS_KEY_ID is not set: the gateway token cannot be passed encrypted');
  const { client, sdk } = await kms.get();
  const out = await client.send(
    new sdk.EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(spec.gatewayToken), EncryptionContext: { userId: spec.userId, purpose: BOOTSTRAP_PURPOSE } }),
  );
  if (!out.CiphertextBlob) throw new LaunchError('KMS returned no ciphertext');
  return Buffer.from(out.CiphertextBlob).toString('base64');
}

/**
 * The smallest Fargate CPU size that allows `memoryMiB` (1 vCPU takes 2 to 8 GB, 2 vCPU 4 to 16 GB,
 * 4 vCPU 8 to 30 GB): the task size is the plan's memory, the CPU only what that size requires.
 */
export function fargateCpuFor(memoryMiB: number): number {
  if (memoryMiB <= 8192) return 1024;
  if (memoryMiB <= 16384) return 2048;
  return 4096;
}

/** ECS clientToken: at most 64 characters, the same for every delivery of one launch. */
export const clientTokenFor = (idempotencyKey: string) => createHash('sha256').update(idempotencyKey).digest('hex');

function endpointOf(task: Task): string | undefined {
  const details = task.attachments?.find((a) => a.type === 'ElasticNetworkInterface')?.details ?? [];
  const ip = details.find((d) => d.name === 'privateIPv4Address')?.value;
  return ip ? `http://${ip}:${RUNTIME_PORT}` : undefined;
}

class EcsLauncher implements Launcher {
  readonly name = 'ecs' as const;

  async launch(spec: LaunchSpec): Promise<LaunchHandle> {
    const { ecs: ecsSettings } = instanceConfig();
    if (!ecsSettings.clusterArn) throw new LaunchError('ECS_CLUSTER_ARN is not set');
    const [taskDefinition, tokenCiphertext] = await Promise.all([taskDefinitionFor(spec.image), encryptedToken(spec)]);
    const { client: ecs, sdk } = await ecsClient.get();
    const out = await ecs.send(
      new sdk.RunTaskCommand({
        cluster: ecsSettings.clusterArn,
        taskDefinition,
        launchType: 'FARGATE',
        count: 1,
        clientToken: clientTokenFor(spec.idempotencyKey),
        group: `agent-platform:${spec.userId}`,
        startedBy: `gen-${spec.generation}`,
        networkConfiguration: {
          // Private subnets with a NAT for the task's own outbound calls: an agent has no public
          // address, and reaches the world only through the agent edge's load balancer.
          awsvpcConfiguration: { subnets: ecsSettings.subnetIds, securityGroups: ecsSettings.securityGroupIds, assignPublicIp: 'DISABLED' },
        },
        overrides: {
          ...(spec.memoryMiB ? { memory: String(spec.memoryMiB), cpu: String(fargateCpuFor(spec.memoryMiB)) } : {}),
          containerOverrides: [
            {
              name: RUNTIME_CONTAINER,
              environment: [
                { name: 'PLATFORM_URL', value: spec.platformUrl },
                { name: 'INSTANCE_USER_ID', value: spec.userId },
                { name: 'RUNTIME_VERSION', value: spec.runtimeVersion },
                { name: 'GATEWAY_TOKEN_KMS_CIPHERTEXT', value: tokenCiphertext },
                { name: 'PORT', value: String(RUNTIME_PORT) },
              ],
            },
          ],
        },
      }),
    );
    const task = out.tasks?.[0];
    if (!task?.taskArn) {
      const why = (out.failures ?? []).map((f) => `${f.reason ?? 'unknown'}${f.detail ? ` (${f.detail})` : ''}`).join('; ') || 'no task started';
      throw new LaunchError(`RunTask failed: ${why}`);
    }
    return { launcher: 'ecs', id: task.taskArn, endpoint: endpointOf(task) };
  }

  async locate(handle: LaunchHandle): Promise<Located> {
    const { client: ecs, sdk } = await ecsClient.get();
    const out = await ecs.send(new sdk.DescribeTasksCommand({ cluster: instanceConfig().ecs.clusterArn, tasks: [handle.id] }));
    const task = out.tasks?.[0];
    if (!task) return { state: 'stopped', handle, reason: 'task not found' };
    const located = { ...handle, endpoint: endpointOf(task) ?? handle.endpoint };
    if (task.lastStatus === 'STOPPED' || task.desiredStatus === 'STOPPED') return { state: 'stopped', handle: located, reason: task.stoppedReason };
    return { state: task.lastStatus === 'RUNNING' ? 'running' : 'pending', handle: located };
  }

  async stop(handle: LaunchHandle, reason: string): Promise<void> {
    const { client: ecs, sdk } = await ecsClient.get();
    try {
      await ecs.send(new sdk.StopTaskCommand({ cluster: instanceConfig().ecs.clusterArn, task: handle.id, reason: reason.slice(0, 255) }));
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === 'InvalidParameterException' || name === 'ResourceNotFoundException') return;
      throw err;
    }
  }
}

export function ecsLauncher(): Launcher {
  return new EcsLauncher();
}
