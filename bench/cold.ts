import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundle, ROOT } from './bundle';
import type { RecordedCommand } from './floor';
import { median, runInFreshProcess } from './init';
import { handlerPath } from '#contract/functions';

/**
 * Cold start to first answer: what a caller waits for when a new container takes the request. A
 * fresh node process imports the function's deploy bundle and answers one warm case's request
 * against DynamoDB Local; its floor does the same with the floor bundle (the bare document client
 * sending the same commands). Module init alone hides what lazy loading moves to the first request
 * (a chunk the route needs, the route's schemas built on first use, the SDK's first connection): this
 * figure counts all of it, on both sides.
 */

export const COLD_RUNS = 7;

export interface ColdCase {
  route: string;
  credential: string;
  group: string;
  /** The API Gateway event, built as the warm case builds it. */
  event: unknown;
  /** The steady-state commands of the route, which the floor replays. */
  commands: RecordedCommand[];
}

export interface ColdResult {
  route: string;
  credential: string;
  group: string;
  runs: number;
  status: number;
  /** Import of the bundle plus the first request, per fresh process. */
  firstAnswerP50Ms: number;
  importP50Ms: number;
  firstCallP50Ms: number;
  floor: { firstAnswerP50Ms: number; importP50Ms: number; firstCallP50Ms: number };
  /** First answer over the floor's. */
  ratio: number;
  samplesMs: number[];
}

interface ProbeOutput {
  importMs: number;
  callMs: number;
  status: number;
}

const LAMBDA_CONTEXT = (group: string) =>
  `{ functionName: ${JSON.stringify(group)}, functionVersion: '$LATEST', memoryLimitInMB: '1024', awsRequestId: 'cold-' + process.pid, ` +
  `invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:' + ${JSON.stringify(group)}, logGroupName: 'bench', logStreamName: 'bench', ` +
  'callbackWaitsForEmptyEventLoop: true, getRemainingTimeInMillis: () => 29000, done() {}, fail() {}, succeed() {} }';

function probe(code: string, env: NodeJS.ProcessEnv): ProbeOutput {
  const out = runInFreshProcess(code, env, 'the cold probe');
  try {
    return JSON.parse(out.trim().split('\n').at(-1) ?? '') as ProbeOutput;
  } catch {
    throw new Error(`the cold probe printed no result: ${out.slice(0, 500)}`);
  }
}

function routeProbe(entry: string, c: ColdCase): string {
  return `const t0 = performance.now();
const { handler } = await import(${JSON.stringify(pathToFileURL(entry).href)});
const t1 = performance.now();
const res = await handler(${JSON.stringify(c.event)}, ${LAMBDA_CONTEXT(c.group)});
const t2 = performance.now();
process.stdout.write('\\n' + JSON.stringify({ importMs: t1 - t0, callMs: t2 - t1, status: res?.statusCode ?? 200 }));`;
}

function floorProbe(entry: string, c: ColdCase, endpoint: string): string {
  return `const t0 = performance.now();
const { createFloorHandler } = await import(${JSON.stringify(pathToFileURL(entry).href)});
const t1 = performance.now();
const floor = createFloorHandler({ endpoint: ${JSON.stringify(endpoint)}, region: 'us-east-1', commands: ${JSON.stringify(c.commands)} });
const res = await floor();
const t2 = performance.now();
process.stdout.write('\\n' + JSON.stringify({ importMs: t1 - t0, callMs: t2 - t1, status: res.statusCode }));`;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export async function measureColdFirstAnswer(
  cases: ColdCase[],
  options: { env: NodeJS.ProcessEnv; dynamoEndpoint: string; floorEntry: string },
  progress: (msg: string) => void,
): Promise<ColdResult[]> {
  const entries = new Map<string, string>();
  for (const group of new Set(cases.map((c) => c.group))) {
    entries.set(group, (await bundle(group, path.join(ROOT, handlerPath(group)))).outfile);
  }
  const results: ColdResult[] = [];
  for (const [i, c] of cases.entries()) {
    progress(`cold first answer ${i + 1}/${cases.length}: ${c.route} (${c.credential}), ${COLD_RUNS} fresh processes each…`);
    const route: ProbeOutput[] = [];
    const floor: ProbeOutput[] = [];
    // Alternated, so drift on a shared machine lands on both.
    for (let n = 0; n < COLD_RUNS; n++) {
      route.push(probe(routeProbe(entries.get(c.group)!, c), options.env));
      floor.push(probe(floorProbe(options.floorEntry, c, options.dynamoEndpoint), options.env));
    }
    const statuses = new Set(route.map((r) => r.status));
    if (statuses.size !== 1 || [...statuses][0]! >= 400) {
      throw new Error(`the cold first answer of ${c.route} (${c.credential}) answered ${[...statuses].join(', ')}, not its warm status`);
    }
    const answer = route.map((r) => r.importMs + r.callMs);
    const floorAnswer = floor.map((r) => r.importMs + r.callMs);
    const firstAnswerP50Ms = median(answer);
    const floorFirstAnswerP50Ms = median(floorAnswer);
    results.push({
      route: c.route,
      credential: c.credential,
      group: c.group,
      runs: COLD_RUNS,
      status: [...statuses][0]!,
      firstAnswerP50Ms: round2(firstAnswerP50Ms),
      importP50Ms: round2(median(route.map((r) => r.importMs))),
      firstCallP50Ms: round2(median(route.map((r) => r.callMs))),
      floor: {
        firstAnswerP50Ms: round2(floorFirstAnswerP50Ms),
        importP50Ms: round2(median(floor.map((r) => r.importMs))),
        firstCallP50Ms: round2(median(floor.map((r) => r.callMs))),
      },
      ratio: round2(firstAnswerP50Ms / floorFirstAnswerP50Ms),
      samplesMs: answer.map(round2),
    });
  }
  return results;
}
