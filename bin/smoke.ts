/**
 * `npm run smoke -- --url <base> ...`: the post-deploy check of ops/smoke (usage: `--help`).
 * Ctrl-C stops the checks and still removes what the run created; a second Ctrl-C leaves at once.
 */
import { randomBytes } from 'node:crypto';
import { parseSmokeArgs, USAGE, UsageError } from '#ops/smoke/options';
import { runSmoke } from '#ops/smoke/run';
import { stepLine } from '#ops/smoke/steps';

async function main(): Promise<number> {
  let options: ReturnType<typeof parseSmokeArgs>;
  try {
    options = parseSmokeArgs(process.argv.slice(2), () => randomBytes(6).toString('hex'));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`smoke: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const interrupt = new AbortController();
  process.once('SIGINT', () => {
    interrupt.abort();
    process.once('SIGINT', () => process.exit(130));
  });
  // With --json, stdout carries the report alone and the progress goes to stderr.
  const progress = options.json ? process.stderr : process.stdout;
  progress.write(`smoke test of ${options.baseUrl}\n`);
  const report = await runSmoke(options, (step) => progress.write(`${stepLine(step)}\n`), interrupt.signal);
  const failed = report.steps.filter((s) => s.outcome === 'fail').length;
  progress.write(`verdict: ${report.verdict.toUpperCase()} (${report.steps.length} steps, ${failed} failed, ${(report.durationMs / 1000).toFixed(1)} s)\n`);
  if (options.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return report.verdict === 'pass' ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (err) => {
    process.stderr.write(`smoke: ${(err as Error).stack ?? err}\n`);
    process.exitCode = 1;
  },
);
