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
  const url = pathToFileURL(file).href;
  const code = `const t = performance.now(); await import(${JSON.stringify(url)}); process.stdout.write(String(performance.now() - t));`;
  const env: NodeJS.ProcessEnv = { ...process.env, ...INIT_ENV };
  // The parent runs under tsx; its loader must not leak into the probe.
  delete env.NODE_OPTIONS;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { env, encoding: 'utf8', timeout: 60_000 });
  const ms = Number(r.stdout);
  if (r.status !== 0 || !Number.isFinite(ms)) {
    throw new Error(`importing ${file} failed (exit ${r.status}${r.signal ? `, ${r.signal}` : ''}): ${r.stderr.trim().slice(0, 2000)}`);
  }
  return ms;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
