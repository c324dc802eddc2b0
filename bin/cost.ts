/**
 * `npm run cost`: the platform's monthly estimate for the settings in cdk.json, with `-c key=value`
 * over them as `cdk deploy` takes them. `--agents N --plan P --requests N --mix public=1,read=3
 * --edge-requests N --console-requests N --tokens N` set the usage; `--json` prints the whole
 * estimate as JSON, `--write` puts the default estimate into docs/deploy.md between its cost markers.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  contextOf,
  costBlock,
  DEFAULT_USAGE,
  estimate,
  parseMix,
  planOf,
  renderMarkdown,
  stackShape,
  withCostBlock,
  type BenchFigures,
} from '#bench/monthly-cost';

const root = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    context: { type: 'string', short: 'c', multiple: true, default: [] },
    agents: { type: 'string' },
    plan: { type: 'string' },
    requests: { type: 'string' },
    mix: { type: 'string' },
    'edge-requests': { type: 'string' },
    'console-requests': { type: 'string' },
    tokens: { type: 'string' },
    json: { type: 'boolean', default: false },
    markdown: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
  },
});

const countOf = (flag: string, text: string | undefined, fallback: number) => {
  if (text === undefined) return fallback;
  const n = Number(text.replace(/_/g, ''));
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${flag} takes a number of 0 or more: ${text}`);
  return n;
};

const cdkJson = JSON.parse(readFileSync(path.join(root, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
const bench = JSON.parse(readFileSync(path.join(root, 'bench/results.json'), 'utf8')) as BenchFigures;
if (values.write && (values.context.length || Object.keys(values).some((k) => !['context', 'json', 'markdown', 'write'].includes(k))))
  throw new Error('--write puts the default estimate into docs/deploy.md: give it no -c flag and no usage');
const shape = stackShape(contextOf(cdkJson.context, values.context));
const result = estimate(shape, bench, {
  agents: countOf('agents', values.agents, DEFAULT_USAGE.agents),
  plan: values.plan === undefined ? DEFAULT_USAGE.plan : planOf(values.plan),
  requests: countOf('requests', values.requests, DEFAULT_USAGE.requests),
  mix: values.mix === undefined ? DEFAULT_USAGE.mix : parseMix(values.mix),
  edgeRequests: countOf('edge-requests', values['edge-requests'], DEFAULT_USAGE.edgeRequests),
  consoleRequests: countOf('console-requests', values['console-requests'], DEFAULT_USAGE.consoleRequests),
  tokens: countOf('tokens', values.tokens, DEFAULT_USAGE.tokens),
});

if (values.write) {
  const doc = path.join(root, 'docs/deploy.md');
  writeFileSync(doc, withCostBlock(readFileSync(doc, 'utf8'), costBlock(result)));
  process.stderr.write('wrote docs/deploy.md cost table\n');
} else process.stdout.write(`${values.json ? JSON.stringify(result, null, 2) : renderMarkdown(result)}\n`);
