import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { TEST_DB_REQUEST_TIMEOUT_MS } from './test-budgets';
import { TEST_JWT_SECRET } from './test-secrets';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The test worker's platform settings, which a user's shell would not have. */
const WORKER_SETTINGS = [
  'JWT_SECRET',
  'DYNAMODB_ENDPOINT',
  'SQS_ENDPOINT',
  'TABLE_NAME',
  'PROVISIONING_QUEUE_URL',
  'EVENTS_QUEUE_URL',
  'STAGE',
  'APP_URL',
  'ADMIN_EMAILS',
  'TESTER_EMAILS',
];

export interface LocalStack {
  child: ChildProcess;
  /** Resolves with the base URL from the `ready:` line; rejects if the stack exits or does not get ready in time. */
  ready: Promise<string>;
  output(): { stdout: string; stderr: string };
  /** Resolves with the exit code once the process has ended. */
  exited(): Promise<number | null>;
  /** What Ctrl-C in a terminal does: SIGINT to the whole process group (tsx and the stack under it). */
  ctrlC(): void;
}

/** A TCP port free on loopback now, for a stack that must come back on the same one (its agents' URLs carry it). */
export async function freeLoopbackPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as import('node:net').AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

/** Runs `bin/local.ts` (what `npm start` runs) as a user would, on a free port, with `env` on top. */
export function startLocalStack(env: Record<string, string>): LocalStack {
  const clean = { ...process.env };
  for (const k of WORKER_SETTINGS) delete clean[k];
  // As `npm start` runs it: one process (tsx as a loader), so signals reach the stack itself.
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--import', 'tsx', 'bin/local.ts'], {
    cwd: ROOT,
    // The loaded test machine's database budget (test/helpers/worker-setup.ts), not production's.
    // The built-in local model without looking for a model server: a stack under test never answers
    // with the machine's own Ollama, nor with the fake one test/integration/local-model.test.ts holds on its port.
    env: { ...clean, PORT: '0', LOG_LEVEL: 'WARN', DYNAMODB_REQUEST_TIMEOUT_MS: TEST_DB_REQUEST_TIMEOUT_MS, LOCAL_MODEL: 'builtin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so ctrlC() reaches every process in it, as a terminal's Ctrl-C does.
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line in 60 s; stderr: ${stderr}`)), 60_000);
    child.stdout!.on('data', () => {
      const m = /^ready: (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${stderr}`));
    });
  });
  ready.catch(() => undefined);
  const exited = () =>
    new Promise<number | null>((r) => (child.exitCode !== null || child.signalCode !== null ? r(child.exitCode) : child.once('exit', (c) => r(c))));
  const ctrlC = () => process.kill(-child.pid!, 'SIGINT');
  return { child, ready, output: () => ({ stdout, stderr }), exited, ctrlC };
}

/**
 * An account on a running local stack made as a user makes one: sign up, open the link the stack
 * wrote to its outbox (`<DATA_DIR>/outbox`), sign in. Admin rights (ADMIN_EMAILS) need that proof.
 */
export async function signUpVerified(base: string, dataDir: string, email: string, password = 'correct-horse-battery') {
  const post = (pathname: string, body: unknown) =>
    fetch(`${base}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const registered = await post('/api/register', { email, password });
  if (registered.status >= 300) throw new Error(`sign-up failed: ${registered.status} ${await registered.text()}`);
  const outbox = path.join(dataDir, 'outbox');
  const mails = readdirSync(outbox)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => JSON.parse(readFileSync(path.join(outbox, name), 'utf8')) as { to: string; text: string });
  const link = /(http\S+verify-email\?token=\S+)/.exec(mails.filter((m) => m.to === email && m.text.includes('/verify-email?')).at(-1)?.text ?? '')?.[1];
  if (!link) throw new Error(`no verification link for ${email} in ${outbox}`);
  const verified = await post('/api/auth/verify-email', { token: new URL(link).searchParams.get('token') });
  if (verified.status !== 200) throw new Error(`verification failed: ${verified.status} ${await verified.text()}`);
  const signIn = await post('/api/auth/callback/credentials', { email, password });
  const token = /(?:^|,\s*)session=([^;]+)/.exec(signIn.headers.getSetCookie().join(', '))?.[1];
  if (!token) throw new Error(`sign-in failed: ${signIn.status}`);
  const { user } = (await signIn.json()) as { user: { id: string } };
  return { userId: user.id, email, token };
}

/** Stops a stack started by a test (if it is still running) and removes its data folder. */
export async function stopLocalStack(stack: LocalStack | undefined, dataDir: string) {
  if (stack?.child.exitCode === null && stack.child.signalCode === null) {
    stack.child.kill('SIGTERM');
    await stack.exited();
  }
  rmSync(dataDir, { recursive: true, force: true });
}

/** Polls `probe` at a short interval until it gives a value, for state a running stack reaches on its own. */
export async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * JSON calls to a running stack as a signed-in user (Bearer). Getters, because the e2e suites learn
 * the base URL and the token in `beforeAll`.
 */
export const bearerApi =
  (base: () => string, token: () => string) =>
  async (method: string, pathname: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${base()}${pathname}`, {
      method,
      headers: { authorization: `Bearer ${token()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

/**
 * One `npm start` for the calling describe block, with a verified admin owner (an admin provisions
 * without a subscription) and a Bearer API as that owner; the stack is stopped and its data removed
 * after the block.
 */
export function localStackWithAdmin(name: string, email: string) {
  const dataDir = mkdtempSync(path.join(tmpdir(), `agent-platform-${name}-e2e-`));
  let stack: LocalStack | undefined;
  let base = '';
  const owner = { userId: '', token: '' };
  beforeAll(async () => {
    stack = startLocalStack({ DATA_DIR: dataDir, JWT_SECRET: TEST_JWT_SECRET, ADMIN_EMAILS: email });
    base = await stack.ready;
    Object.assign(owner, await signUpVerified(base, dataDir, email));
  }, 120_000);
  afterAll(() => stopLocalStack(stack, dataDir));
  return {
    owner,
    api: bearerApi(
      () => base,
      () => owner.token,
    ),
  };
}
