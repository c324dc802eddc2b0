import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';

/**
 * The system Chromium (Debian's `chromium` package; `.ci/run` installs it) driven by playwright-core,
 * which downloads no browser. Shared by the console's browser test and `npm run screenshots`.
 */
export function findChromium(): string {
  for (const candidate of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) if (existsSync(candidate)) return candidate;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    try {
      const found = execFileSync('which', [name], { encoding: 'utf8' }).trim();
      if (found) return found;
    } catch {
      // not on PATH: try the next name
    }
  }
  throw new Error(
    'Chromium not found (looked for /usr/bin/chromium and chromium, chromium-browser, google-chrome on PATH): ' +
      'install it with `apt-get install -y chromium` (as .ci/run does); the web console test needs a real browser.',
  );
}

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: findChromium(), args: ['--no-sandbox'] });

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core run in the page (evaluated through the DevTools protocol, which the page's CSP does not
 * govern, so the console keeps its no-inline-script policy): the serious and critical violations.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
}

/** The page's messages through the platform's chat routes (`POST /api/chat`, `/api/ai/chat`; not the history reads), as `METHOD path`. */
export function recordChatCalls(page: Page): string[] {
  const calls: string[] = [];
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (request.method() === 'POST' && /^\/api\/(ai\/)?chat$/.test(pathname)) calls.push(`${request.method()} ${pathname}`);
  });
  return calls;
}

type Frame = { type?: string; id?: string; replyTo?: string; [k: string]: unknown };

/** The websockets the page opens to agents (through the edge), with the JSON frames each way. */
export function recordAgentSockets(page: Page): { urls: string[]; sent: Frame[]; received: Frame[] } {
  const seen = { urls: [] as string[], sent: [] as Frame[], received: [] as Frame[] };
  const parse = (payload: string | Buffer): Frame => {
    try {
      return JSON.parse(payload.toString()) as Frame;
    } catch {
      return { type: 'text', text: payload.toString() };
    }
  };
  page.on('websocket', (ws) => {
    if (!/\.agents\.localhost$/.test(new URL(ws.url()).hostname)) return;
    seen.urls.push(ws.url());
    ws.on('framesent', ({ payload }) => seen.sent.push(parse(payload)));
    ws.on('framereceived', ({ payload }) => seen.received.push(parse(payload)));
  });
  return seen;
}

/** The agent's stored history as the console's session reads it, newest first, as `[role, content]`. */
export async function readHistory(page: Page, agentId: string): Promise<[string, string][]> {
  const body = (await page.evaluate(`fetch('/api/chat?agentId=${encodeURIComponent(agentId)}').then((r) => r.json())`)) as {
    messages: { role: string; content: string }[];
  };
  return body.messages.map((m) => [m.role, m.content]);
}
