import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ECSClient, RunTaskCommand } from '@aws-sdk/client-ecs';
import { EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ecsLauncher } from '#adapters/launcher-ecs';
import { reloadConfig, instanceConfig } from '#platform/config';
import { buildRuntime } from '#build/runtime';

/**
 * There is no container engine here, so the image is checked by doing what it does: the build
 * stage's bundling command, the run stage's files in its WORKDIR, its CMD with the environment the
 * ECS launcher gives a task (taken from a real launch, not retyped), then its HEALTHCHECK command.
 * Everything is read from runtime/Dockerfile, so a change there is a change here.
 *
 * The task's AWS side speaks the real wire formats on loopback: the ECS container credentials
 * endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI) and KMS Decrypt (JSON 1.1, X-Amz-Target), plus the
 * platform's runtime state route.
 */

const DOCKERFILE = readFileSync(new URL('../../runtime/Dockerfile', import.meta.url), 'utf8');
const USER_ID = 'u_image';
const TOKEN = 'gw_token-the-task-decrypts-itself';
const CIPHERTEXT = Buffer.from('opaque-kms-ciphertext-blob');

interface Instruction {
  op: string;
  args: string;
}

/**
 * The Dockerfile's stages, each a list of instructions (no line continuations are used); the ARGs
 * before the first FROM (the pinned base) are substituted into the FROM lines, as Docker does.
 */
function stages(text: string): Instruction[][] {
  const out: Instruction[][] = [];
  const globalArgs = new Map<string, string>();
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (!line || line.startsWith('#')) continue;
    const [, op, args] = /^(\S+)\s+(.*)$/.exec(line)!;
    if (!out.length && op!.toUpperCase() === 'ARG') {
      const [name, value = ''] = args!.split('=');
      globalArgs.set(name!, value);
      continue;
    }
    if (op!.toUpperCase() === 'FROM') out.push([]);
    const expanded = op!.toUpperCase() === 'FROM' ? args!.replace(/\$\{(\w+)\}/g, (_, name: string) => globalArgs.get(name) ?? '') : args!;
    out.at(-1)!.push({ op: op!.toUpperCase(), args: expanded });
  }
  return out;
}

const only = (stage: Instruction[], op: string) => {
  const found = stage.filter((i) => i.op === op);
  expect(found, `one ${op}`).toHaveLength(1);
  return found[0]!.args;
};

const parsed = stages(DOCKERFILE);
const buildStage = parsed[0]!;
const runStage = parsed.at(-1)!;

/** Fake ECS-task surroundings: container credentials, KMS, and the platform's state route. */
async function taskSurroundings() {
  const decrypts: { ciphertext: string; context: unknown; authorization: string }[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    const send = (status: number, json: unknown, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(JSON.stringify(json));
    };
    if (req.method === 'GET' && req.url === '/task-credentials') {
      return send(200, {
        AccessKeyId: 'ASIATASKROLE',
        SecretAccessKey: 'task-secret',
        Token: 'task-session',
        Expiration: new Date(Date.now() + 3600_000).toISOString(),
      });
    }
    if (req.method === 'POST' && req.headers['x-amz-target'] === 'TrentService.Decrypt') {
      const input = JSON.parse(body) as { CiphertextBlob: string; EncryptionContext: unknown };
      decrypts.push({ ciphertext: input.CiphertextBlob, context: input.EncryptionContext, authorization: String(req.headers.authorization) });
      if (input.CiphertextBlob !== CIPHERTEXT.toString('base64'))
        return send(400, { __type: 'InvalidCiphertextException', message: 'bad blob' }, 'application/x-amz-json-1.1');
      return send(200, { KeyId: 'arn:aws:kms:eu-west-1:123456789012:key/1', Plaintext: Buffer.from(TOKEN).toString('base64') }, 'application/x-amz-json-1.1');
    }
    if (req.method === 'GET' && req.url === `/api/instance/${USER_ID}/runtime/state`) {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { error: 'bad token', code: 'TOKEN_INVALID' });
      return send(200, { userId: USER_ID, runtimeVersion: '1.0.0', agents: [] });
    }
    send(404, { error: 'not found', code: 'NOT_FOUND' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, decrypts, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The environment ECS gives the container: the launcher's overrides of a real launch call. */
async function launcherEnvironment(platformUrl: string): Promise<Record<string, string>> {
  const ecs = mockClient(ECSClient);
  const kms = mockClient(KMSClient);
  try {
    reloadConfig({
      ECS_CLUSTER_ARN: 'arn:aws:ecs:eu-west-1:123456789012:cluster/agents',
      ECS_TASK_DEFINITION_ARN: 'arn:aws:ecs:eu-west-1:123456789012:task-definition/runtime:1',
      ECS_SUBNET_IDS: 'subnet-a',
      ECS_SECURITY_GROUP_IDS: 'sg-runtime',
      KMS_KEY_ID: 'alias/agent-platform',
    });
    kms.on(EncryptCommand).resolves({ CiphertextBlob: CIPHERTEXT });
    ecs.on(RunTaskCommand).resolves({ tasks: [{ taskArn: 'arn:aws:ecs:eu-west-1:123456789012:task/agents/t1' }], failures: [] });
    await ecsLauncher().launch({
      userId: USER_ID,
      idempotencyKey: `${USER_ID}#1`,
      generation: 1,
      image: instanceConfig().runtimeImage,
      runtimeVersion: '1.0.0',
      gatewayToken: TOKEN,
      platformUrl,
    });
    const overrides = ecs.commandCalls(RunTaskCommand)[0]!.args[0].input.overrides!.containerOverrides![0]!;
    return Object.fromEntries(overrides.environment!.map((e) => [e.name!, e.value!]));
  } finally {
    ecs.restore();
    kms.restore();
    reloadConfig({
      ECS_CLUSTER_ARN: undefined,
      ECS_TASK_DEFINITION_ARN: undefined,
      ECS_SUBNET_IDS: undefined,
      ECS_SECURITY_GROUP_IDS: undefined,
      KMS_KEY_ID: undefined,
    });
  }
}

const jsonArray = (text: string) => {
  const list = JSON.parse(text) as unknown;
  expect(Array.isArray(list), `exec form: ${text}`).toBe(true);
  return list as string[];
};

/** `node <args>` with this process's Node, which the test asserts is the image's major version. */
const nodeCommand = (argv: string[]) => {
  expect(argv[0]).toBe('node');
  return { command: process.execPath, args: argv.slice(1) };
};

describe('runtime image (runtime/Dockerfile)', () => {
  let root: string;
  let workdir: string;
  let child: ChildProcess | undefined;
  let surroundings: Awaited<ReturnType<typeof taskSurroundings>>;
  let environment: Record<string, string>;

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'runtime-image-'));
    surroundings = await taskSurroundings();
    environment = await launcherEnvironment(surroundings.url);
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await surroundings?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('is Node 22 on a small base in both stages, and runs as the unprivileged node user', () => {
    for (const stage of parsed) expect(stage[0]!.args).toMatch(/^node:22-alpine\b/);
    expect(process.versions.node.split('.')[0]).toBe('22');
    expect(only(runStage, 'USER')).toBe('node');
    // Nothing after USER may run as root again.
    const userAt = runStage.findIndex((i) => i.op === 'USER');
    expect(runStage.slice(userAt + 1).filter((i) => i.op === 'RUN')).toEqual([]);
  });

  it('builds the bundle, lays out the run stage, starts with its CMD and the launcher environment, and passes its HEALTHCHECK', async () => {
    // Build stage: the bundling command, whose output path is the container path mapped under root.
    const buildRun = buildStage.filter((i) => i.op === 'RUN').at(-1)!.args;
    const [, outfile] = /^npx tsx build\/runtime\.ts (\/\S+)$/.exec(buildRun) ?? [];
    expect(outfile, `bundling step: ${buildRun}`).toBeDefined();
    await buildRuntime(path.join(root, outfile!));

    // Run stage: WORKDIR and what is copied from the build stage, and nothing else.
    workdir = path.join(root, only(runStage, 'WORKDIR'));
    mkdirSync(workdir, { recursive: true });
    const copies = runStage.filter((i) => i.op === 'COPY');
    expect(copies.every((c) => c.args.includes('--from=build'))).toBe(true);
    for (const copy of copies) {
      const [source, dest] = copy.args.split(/\s+/).filter((a) => !a.startsWith('--'));
      copyFileSync(path.join(root, source!), path.join(workdir, dest === './' ? path.basename(source!) : dest!));
    }
    const files = readdirSync(workdir);
    expect(files).toEqual(['server.mjs']);
    const bundleKb = statSync(path.join(workdir, 'server.mjs')).size / 1024;
    expect(bundleKb, 'one self-contained bundle, no node_modules').toBeLessThan(1024);

    const imageEnv = Object.fromEntries(
      only(runStage, 'ENV')
        .split(/\s+/)
        .map((pair) => pair.split('=') as [string, string]),
    );
    const { command, args } = nodeCommand(jsonArray(only(runStage, 'CMD')));
    child = spawn(command, args, {
      cwd: workdir,
      env: {
        ...imageEnv,
        ...environment,
        // What Fargate adds beside the overrides (the credentials URI on loopback is the SDK's allowed variant).
        AWS_REGION: 'eu-west-1',
        AWS_CONTAINER_CREDENTIALS_FULL_URI: `${surroundings.url}/task-credentials`,
        AWS_ENDPOINT_URL_KMS: surroundings.url,
        // A free port instead of 8080, so parallel runs never collide.
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      let stdout = '';
      child!.stdout!.on('data', (d: Buffer) => {
        stdout += d.toString();
        const m = /^listening (\d+)$/m.exec(stdout);
        if (m) resolve(Number(m[1]));
      });
      child!.once('exit', (code) => reject(new Error(`runtime exited with ${code}: ${stderr}`)));
    });

    // The token was decrypted with the task role's credentials under the bootstrap encryption context.
    expect(surroundings.decrypts).toEqual([
      {
        ciphertext: CIPHERTEXT.toString('base64'),
        context: { userId: USER_ID, purpose: 'runtime-bootstrap' },
        authorization: expect.stringContaining('Credential=ASIATASKROLE/'),
      },
    ]);
    // Ready once it loaded its state from the platform with that token.
    let health: Response;
    for (;;) {
      health = await fetch(`http://127.0.0.1:${port}/health`, { headers: { authorization: `Bearer ${TOKEN}` } });
      if (health.status !== 503) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', agents: 0 });

    // HEALTHCHECK: its exec-form command, run in the container's environment, exits 0.
    const healthcheck = /\bCMD\s+(\[.*\])$/.exec(only(runStage, 'HEALTHCHECK'))![1]!;
    const probe = nodeCommand(jsonArray(healthcheck));
    const ok = spawnSync(probe.command, probe.args, { cwd: workdir, env: { ...imageEnv, PORT: String(port) }, timeout: 10_000 });
    expect(ok.status, ok.stderr?.toString()).toBe(0);
    // ...and fails when nothing answers on the port.
    const down = spawnSync(probe.command, probe.args, { cwd: workdir, env: { ...imageEnv, PORT: '1' }, timeout: 10_000 });
    expect(down.status).toBe(1);
  });
});
