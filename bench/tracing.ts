import { createRequire } from 'node:module';
import path from 'node:path';
import { bundle, ROOT } from './bundle';
import { importOnce, median } from './init';

/**
 * Lambda active tracing against the Powertools Tracer (DESIGN.md section 11 budgets init): the same
 * trivial handler bundled with CDK's settings, without and with the Tracer, then the median module
 * init of fresh node processes. Active tracing adds nothing to the bundle, so "none" is its cost.
 */

const TRACER_PACKAGE = '@aws-lambda-powertools/tracer';
const RUNS = 15;

export interface TracingResult {
  runs: number;
  none: { bytes: number; initMedianMs: number };
  /** Absent when the Tracer package is not installed (it is not a dependency: active tracing was chosen). */
  powertools?: { bytes: number; initMedianMs: number };
  addedInitMs?: number;
  note?: string;
}

const installed = () => {
  try {
    createRequire(path.join(ROOT, 'package.json')).resolve(`${TRACER_PACKAGE}/package.json`);
    return true;
  } catch {
    return false;
  }
};

export async function measureTracing(progress: (msg: string) => void): Promise<TracingResult> {
  const none = await bundle('tracing-none', path.join(ROOT, 'bench', 'tracing', 'none.mjs'));
  const withTracer = installed() ? await bundle('tracing-powertools', path.join(ROOT, 'bench', 'tracing', 'powertools.mjs')) : undefined;
  const samples = { none: [] as number[], powertools: [] as number[] };
  for (let round = 0; round <= RUNS; round++) {
    progress(`measuring tracing init: round ${round}/${RUNS}…`);
    const a = importOnce(none.outfile);
    const b = withTracer ? importOnce(withTracer.outfile) : undefined;
    if (round === 0) continue;
    samples.none.push(a);
    if (b !== undefined) samples.powertools.push(b);
  }
  const result: TracingResult = { runs: RUNS, none: { bytes: none.initBytes, initMedianMs: median(samples.none) } };
  if (!withTracer) return { ...result, note: `${TRACER_PACKAGE} is not installed; install it as a devDependency to measure it` };
  const powertools = { bytes: withTracer.initBytes, initMedianMs: median(samples.powertools) };
  return { ...result, powertools, addedInitMs: powertools.initMedianMs - result.none.initMedianMs };
}
