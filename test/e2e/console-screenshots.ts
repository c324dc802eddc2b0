/**
 * `npm run screenshots`: PNGs of the web console's main pages in docs/screenshots/, taken in the
 * system Chromium against `npm start` (local card mode, a fake model on loopback) with an account
 * that has subscribed, runs an agent and has chatted, so the pages show real data.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeModelServer } from '../helpers/fake-model-server';
import { bearerApi, signUpVerified, startLocalStack, stopLocalStack, until } from '../helpers/local-stack';
import { launchChromium } from './console-browser';

const OUT = path.resolve(import.meta.dirname, '../../docs/screenshots');
const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-screenshots-'));
const model = await startFakeModelServer();
const stack = startLocalStack({ DATA_DIR: dataDir, CARD_MODE: 'local', MODEL_API_BASE_URL: model.baseUrl, MODEL_API_KEY: 'sk-screenshots' });
const browser = await launchChromium().catch(async (err) => {
  await stopLocalStack(stack, dataDir);
  throw err;
});
try {
  const base = await stack.ready;
  const { token, userId } = await signUpVerified(base, dataDir, 'ada@example.com');
  const api = bearerApi(
    () => base,
    () => token,
  );
  const checkout = await fetch(`${base}/api/card/checkout?plan=solo`, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });
  await fetch(checkout.headers.get('location')!, { method: 'POST', redirect: 'manual' });
  const { body } = await api('POST', '/api/agents/provision', { name: 'Tour booking assistant' });
  await until(async () => ((await api('GET', `/api/instance/${userId}?waitFor=running&timeout=25`)).body.status === 'running' ? true : undefined), 'running');
  // Through the agent, so its history (the Chat section) and its log have them.
  for (const message of ['Which venues in Berlin hold 300 people?', 'Draft a 90-minute deep house set.'])
    await api('POST', '/api/chat', { agentId: body.agent.id, message });
  await api('POST', '/api/memory', { agentId: body.agent.id, key: 'favourite_venue', memory: { city: 'Bristol', name: 'The Fleece' } });

  const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  await context.addCookies([{ name: 'session', value: token, url: base, httpOnly: true }]);
  const page = await context.newPage();
  mkdirSync(OUT, { recursive: true });
  // The dashboard before the last getting-started step, so that its checklist shows.
  await page.goto('/');
  await page.getByRole('heading', { name: 'Getting started' }).waitFor();
  await page.locator('main .badge').first().waitFor();
  await page.screenshot({ path: path.join(OUT, 'dashboard.png'), fullPage: true });
  process.stderr.write('wrote docs/screenshots/dashboard.png\n');
  await api('POST', '/api/keys', { name: 'CI deploy key' });
  /** Page, route, heading, and what shows once its data is in. */
  const shots: [string, string, string, string][] = [
    ['agent', `/agents/${body.agent.id}?tab=chat`, 'Tour booking assistant', 'main .chat li'],
    ['agent-overview', `/agents/${body.agent.id}`, 'Tour booking assistant', 'main dl.facts'],
    ['agent-logs', `/agents/${body.agent.id}?tab=logs`, 'Tour booking assistant', 'main .log li.log-line'],
    ['billing', '/settings/billing', 'Billing', 'main .chart canvas'],
    ['marketplace', '/marketplace', 'Skills marketplace', 'main li.panel'],
    ['keys', '/keys', 'API keys', 'main table'],
    ['settings', '/settings', 'Settings', 'main form'],
  ];
  for (const [name, route, heading, loaded] of shots) {
    await page.goto(route);
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
    await page.locator(loaded).first().waitFor();
    await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
    process.stderr.write(`wrote docs/screenshots/${name}.png\n`);
  }
  await context.clearCookies();
  await page.goto('/sign-in');
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.screenshot({ path: path.join(OUT, 'sign-in.png') });
  process.stderr.write('wrote docs/screenshots/sign-in.png\n');
  const phone = await browser.newContext({ baseURL: base, viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
  await phone.addCookies([{ name: 'session', value: token, url: base, httpOnly: true }]);
  const phonePage = await phone.newPage();
  await phonePage.goto(`/agents/${body.agent.id}?tab=chat`);
  await phonePage.getByRole('heading', { name: 'Tour booking assistant' }).waitFor();
  await phonePage.locator('main .chat li').first().waitFor();
  await phonePage.screenshot({ path: path.join(OUT, 'agent-phone.png') });
  process.stderr.write('wrote docs/screenshots/agent-phone.png\n');
} finally {
  await browser.close();
  await model.close();
  await stopLocalStack(stack, dataDir);
}
