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
