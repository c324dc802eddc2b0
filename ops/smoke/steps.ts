/** One step of a smoke run as it is reported. */
export interface StepResult {
  name: string;
  phase: 'check' | 'cleanup';
  outcome: 'pass' | 'fail' | 'skip';
  ms: number;
  /** What was seen (pass) or why the step did not run (skip). */
  detail?: string;
  /** Why it failed. */
  error?: string;
}

/** A step's work: resolves with what to report and what later steps need. */
export type StepWork<T> = (signal: AbortSignal) => Promise<{ detail: string; value: T }>;

/**
 * Runs the steps one after another, each bounded by its own timeout (and, for checks, by the
 * run's abort signal, which an operator's Ctrl-C fires); a failed check makes the checks after it
 * skip. Cleanup steps ignore the run's abort: what was created is removed however the run ended.
 */
export class StepRunner {
  readonly results: StepResult[] = [];
  private failedCheck: string | undefined;

  constructor(
    private readonly onStep: (result: StepResult) => void,
    private readonly runSignal: AbortSignal,
  ) {}

  get failed(): boolean {
    return this.results.some((r) => r.outcome === 'fail');
  }

  private record(result: StepResult) {
    this.results.push(result);
    this.onStep(result);
  }

  skip(name: string, why: string, phase: StepResult['phase'] = 'check'): void {
    this.record({ name, phase, outcome: 'skip', ms: 0, detail: why });
  }

  check<T>(name: string, timeoutSeconds: number, work: StepWork<T>): Promise<T | undefined> {
    if (this.failedCheck) {
      this.skip(name, `after the failure of ${this.failedCheck}`);
      return Promise.resolve(undefined);
    }
    if (this.runSignal.aborted) {
      this.failedCheck = 'the run (interrupted)';
      this.skip(name, 'the run was interrupted');
      return Promise.resolve(undefined);
    }
    return this.step(name, 'check', timeoutSeconds, work, [this.runSignal]);
  }

  cleanup<T>(name: string, timeoutSeconds: number, work: StepWork<T>): Promise<T | undefined> {
    return this.step(name, 'cleanup', timeoutSeconds, work, []);
  }

  private async step<T>(name: string, phase: StepResult['phase'], timeoutSeconds: number, work: StepWork<T>, also: AbortSignal[]): Promise<T | undefined> {
    const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
    const signal = AbortSignal.any([timeout, ...also]);
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    try {
      const { detail, value } = await work(signal);
      this.record({ name, phase, outcome: 'pass', ms: ms(), detail });
      return value;
    } catch (err) {
      const why = timeout.aborted ? `timed out after ${timeoutSeconds} s` : signal.aborted ? 'interrupted' : undefined;
      const message = (err as Error).message ?? String(err);
      this.record({ name, phase, outcome: 'fail', ms: ms(), error: why && !message.includes(why) ? `${why}: ${message}` : message });
      if (phase === 'check') this.failedCheck = name;
      return undefined;
    }
  }
}

/** The report's lines: one per step as it ends, then the verdict. */
export function stepLine(r: StepResult): string {
  const label = r.outcome === 'pass' ? 'pass' : r.outcome === 'fail' ? 'FAIL' : 'skip';
  const time = r.outcome === 'skip' ? '' : `${r.ms} ms`;
  return `  ${label}  ${r.name.padEnd(26)} ${time.padStart(9)}  ${r.error ?? r.detail ?? ''}`.trimEnd();
}
