import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

/**
 * Module init of one bundle: the time `import()` of it takes in a fresh node process, measured
 * inside that process so node's own start-up is not counted.
 */

/** Config is parsed lazily, but a bundle must also import cleanly with a Lambda-like environment. */
export const INIT_ENV = {
  LOG_LEVEL: 'SILENT',
  STAGE: 'test',
  AWS_REGION: 'us-east-1',
  JWT_SECRET: 'bench-dummy-secret-at-least-32-bytes-long-0123456789',
};

export function importOnce(file: string): number {
  return timeInFreshProcess(file, `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)});`);
}

/**
 * After the entry's import, the time to import each of its lazy chunks: at most what the first
 * requests that need them pay on top of a cold start (one chunk's import also loads the chunks it shares).
 */
export function lazyLoadOnce(entry: string, chunks: string[]): number {
  const urls = chunks.map((c) => pathToFileURL(c).href);
  return timeInFreshProcess(
    entry,
    `await import(${JSON.stringify(pathToFileURL(entry).href)}); const t = performance.now(); for (const u of ${JSON.stringify(urls)}) await import(u);`,
  );
}

/** Runs `code` (which sets `t`) in a fresh node process and returns the ms from `t` to its end. */
function timeInFreshProcess(file: string, code: string): number {
  const out = runInFreshProcess(`${code} process.stdout.write(String(performance.now() - t));`, INIT_ENV, `importing ${file}`);
  const ms = Number(out);
  if (!Number.isFinite(ms)) throw new Error(`importing ${file} printed no time: ${out.slice(0, 500)}`);
  return ms;
}

/**
 * Runs an ES module `code` in a fresh node process with `env` added to this one's, and returns what
 * it printed. The parent runs under tsx; its loader must not leak into the probe.
 */
export function runInFreshProcess(code: string, env: NodeJS.ProcessEnv, what: string): string {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { env: childEnv, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status}${r.signal ? `, ${r.signal}` : ''}): ${r.stderr.trim().slice(0, 2000)}`);
  return r.stdout;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
