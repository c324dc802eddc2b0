import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { processStartTime, readPidRecords } from '#local/supervision';
import { testSession } from '../helpers/api';
import { bearerApi, startLocalStack, stopLocalStack, until, type LocalStack } from '../helpers/local-stack';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

/**
 * The local stack's children die with it. SIGKILL of the server process
 * alone (no chance to clean up) leaves no DynamoDB Local JVM or agent runtime behind; a child a
 * crash left is reaped at the next start; DynamoDB Local dying stops the stack with a message.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-killed-e2e-'));
const pidDir = path.join(dataDir, 'pids');
const env = { DATA_DIR: dataDir, JWT_SECRET: TEST_JWT_SECRET, ADMIN_EMAILS: 'admin@example.com' };
let stack: LocalStack | undefined;

/** Running: a zombie (dead, waiting for whoever adopted it to reap it) does not count. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!existsSync('/proc')) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

/** Milliseconds until none of `pids` runs any more (fails past `withinMs`). */
async function allGone(pids: number[], withinMs: number): Promise<number> {
  const started = Date.now();
  await until(async () => (pids.some(alive) ? undefined : true), `processes ${pids.join(', ')} to end`, withinMs);
  return Date.now() - started;
}

afterAll(() => stopLocalStack(stack, dataDir));

describe('the local stack leaves no process behind', () => {
  it('SIGKILL of the server process alone: the JVM and the agent runtime die within seconds', async () => {
    const admin = await testSession({ admin: true });
    stack = startLocalStack(env);
    const base = await stack.ready;
    const api = bearerApi(
      () => base,
      () => admin.token,
    );
    const provisioned = await api('POST', '/api/agents/provision', { name: 'orphan check' });
    expect(provisioned.status).toBe(201);
    const agentId = provisioned.body.agent.id;
    await until(async () => ((await api('GET', `/api/agents/${agentId}`)).body.agent?.status === 'running' ? true : undefined), 'the agent to run', 90_000);

    const children = readPidRecords(pidDir).map((r) => r.record);
    expect(children.map((c) => c.kind).sort()).toEqual(['dynamodb-local', 'runtime']);
    const pids = children.map((c) => c.pid);
    expect(pids.every(alive)).toBe(true);

    stack.child.kill('SIGKILL');
    await stack.exited();
    const settleMs = await allGone(pids, 10_000);
    console.info(`children gone ${settleMs} ms after SIGKILL of the server process`);
    // The watchdog removes each pid file just after its kill (killRecorded): give it a moment.
    await until(async () => (readPidRecords(pidDir).length === 0 ? true : undefined), 'the pid files to be removed', 5_000).catch(() => undefined);
    expect(readPidRecords(pidDir)).toEqual([]);
  }, 150_000);

  it('a start reaps a child an earlier crash left; DynamoDB Local killed stops the stack with a message and no child left', async () => {
    // What a crash of the stack and its watchdog together leaves: a recorded child still running.
    const leftover = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore', detached: true });
    leftover.unref();
    const leftoverPid = leftover.pid!;
    mkdirSync(pidDir, { recursive: true });
    writeFileSync(
      path.join(pidDir, `runtime-${leftoverPid}.json`),
      JSON.stringify({ pid: leftoverPid, kind: 'runtime', startedAt: processStartTime(leftoverPid) }),
    );

    stack = startLocalStack(env);
    await stack.ready;
    expect(alive(leftoverPid)).toBe(false);
    expect(stack.output().stderr).toContain(`stopped a runtime process (pid ${leftoverPid}) left by an earlier crash`);

    const jvm = readPidRecords(pidDir).find((r) => r.record.kind === 'dynamodb-local')!.record;
    // The heap cap (DYNAMODB_LOCAL_MAX_HEAP_MB, default 512) is on the JVM's command line.
    if (existsSync('/proc')) expect(readFileSync(`/proc/${jvm.pid}/cmdline`, 'utf8').split('\0')).toContain('-Xmx512m');
    const killedAt = Date.now();
    process.kill(jvm.pid, 'SIGKILL');
    expect(await stack.exited()).toBe(1);
    console.info(`the stack exited ${Date.now() - killedAt} ms after DynamoDB Local was killed`);
    expect(stack.output().stderr).toMatch(/DynamoDB Local \(pid \d+\) exited unexpectedly \(SIGKILL\).*Start it again with npm start/);
    expect(readPidRecords(pidDir).filter((r) => alive(r.record.pid))).toEqual([]);
  }, 150_000);
});
