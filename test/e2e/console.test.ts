import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page, WebSocketRoute } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswerTo, type FakeModelServer, startFakeModelServer } from '../helpers/fake-model-server';
import { type LocalStack, startLocalStack, stopLocalStack } from '../helpers/local-stack';
import { launchChromium, readHistory, recordAgentSockets, recordChatCalls, seriousViolations } from './console-browser';

/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against `npm start`
 * with a fake model provider and the local card processor: a new user goes from sign-up to a
 * running agent, a streamed chat, an API key and the usage chart, then signs out. Along the way:
 * untrusted text stays text (no dialog ever opens), axe-core finds no serious or critical
 * violation on any page, and the CSP reports no violation.
 */
/** Waits of the page for state the stack reaches on its own (expect.poll's default is 1 s). */
const POLL = { timeout: 15_000, interval: 100 };
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

/**
 * The settings this stack needs beyond a data folder: the local card processor and a fake model.
 * Once `npm start` runs the whole journey with no settings (the local card processor and the
 * built-in model by default), this is the one place to empty.
 */
const stackSettings = (model: FakeModelServer): Record<string, string> => ({
  CARD_MODE: 'local',
  MODEL_API_BASE_URL: model.baseUrl,
  MODEL_API_KEY: 'sk-console-e2e',
});

/** Opens a section of the agent page by its link, as a user does. */
async function section(p: Page, name: string) {
  await p.getByRole('navigation', { name: 'Agent sections' }).getByRole('link', { name, exact: true }).click();
  await p.locator(`.sections a[aria-current="page"]`).filter({ hasText: name }).waitFor();
}

const listAgentsOf = async (p: Page): Promise<string[]> =>
  ((await p.evaluate("fetch('/api/agents').then((r) => r.json())")) as { agents: { id: string }[] }).agents.map((a) => a.id);

describe('web console in Chromium', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-console-e2e-'));
  const email = 'console-user@example.com';
  const password = 'correct-horse-battery';
  const xssName = '<img src=x onerror=alert(1)>';
  const chatText = '<script>alert(2)</script> hello';
  let model: FakeModelServer;
  let stack: LocalStack;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  const cspViolations: string[] = [];
  const audited: Record<string, unknown[]> = {};

  /** axe on the page as it is now; every page of the journey is audited. */
  const audit = async (name: string) => {
    await page.locator('main h1').first().waitFor();
    audited[name] = await seriousViolations(page);
  };

  beforeAll(async () => {
    // Fails (never skips) with a clear message when no Chromium is installed.
    browser = await launchChromium();
    model = await startFakeModelServer();
    stack = startLocalStack({ DATA_DIR: dataDir, ...stackSettings(model) });
    base = await stack.ready;
    context = await browser.newContext({ baseURL: base, viewport: DESKTOP });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await model?.close();
    await stopLocalStack(stack, dataDir);
  });

  it('serves the console at / with its security headers and the SPA fallback', async () => {
    const res = await fetch(`${base}/agents/some-client-route`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /src="(\/assets\/console-[A-Z0-9]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${base}${script}`);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${base}/assets/console-NOPE.js`)).status).toBe(404);
    const index = await fetch(`${base}/api`);
    expect(await index.json()).toMatchObject({ openapi: '/api/openapi.json' });
  });

  it('a new user signs up, confirms the address from the outbox and is refused provisioning in words until subscribed', async () => {
    await page.goto('/');
    await page.waitForURL(/\/sign-in\?next=/);
    await audit('sign-in');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await audit('sign-up');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Your agents' }).waitFor();
    // The checklist follows the account: nothing is done yet, and confirming the address comes first.
    const checklist = page.getByRole('region', { name: 'Getting started' });
    await checklist.getByText('0 of 5 done.').waitFor();
    await checklist.getByRole('button', { name: 'Send the link again' }).waitFor();

    const outbox = path.join(dataDir, 'outbox');
    const mail = readdirSync(outbox)
      .map((f) => readFileSync(path.join(outbox, f), 'utf8'))
      .find((m) => m.includes(email) && m.includes('/verify-email?'))!;
    const link = /(http[^\s"\\]+\/verify-email\?token=[\w-]+)/.exec(mail)![1]!;
    expect(new URL(link).origin).toBe(base);
    await page.goto(link);
    await page.getByRole('status').filter({ hasText: 'Your email address is confirmed.' }).waitFor();
    await audit('verify-email');

    await page.getByRole('link', { name: 'Go to your agents' }).click();
    await page.getByLabel('New agent name').fill('too early');
    await page.getByRole('button', { name: 'Provision agent' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'needs an active subscription' });
    await refused.waitFor();
    // The next step is a control beside the words, and the code itself is never shown.
    await refused.getByRole('link', { name: 'Choose a plan' }).waitFor();
    expect(await refused.textContent()).not.toMatch(/[A-Z]+_[A-Z]+/);
    await page.getByRole('region', { name: 'Getting started' }).getByText('1 of 5 done.').waitFor();
    await audit('dashboard');
  });

  it('subscribes through the local checkout and comes back to the billing page with the plan active', async () => {
    await page.getByRole('link', { name: 'Billing' }).click();
    await audit('billing');
    // The plans and their prices come from the API, written in their currency.
    const offered = (await page.evaluate("fetch('/api/billing').then((r) => r.json())")) as { plans: { plan: string; price: { amount: number } }[] };
    expect(offered.plans.map((p) => p.plan)).toEqual(['label', 'solo', 'collective', 'network']);
    expect(await page.getByTestId('price-solo').textContent()).toBe(`$${offered.plans[1]!.price.amount}.00/month`);
    expect(await page.getByTestId('plan').textContent()).toBe('No plan yet');
    await page.getByRole('button', { name: 'Subscribe to solo' }).click();
    await page.waitForURL(/\/local-card\/checkout\/cs_local_/);
    await page.getByRole('button', { name: 'Pay (local test)' }).click();
    await page.waitForURL(/\/settings\/billing\?checkout=success/);
    await page.getByTestId('plan').filter({ hasText: 'solo (active)' }).waitFor();
    expect(await page.locator('main').textContent()).not.toMatch(/none \(none\)|Renews —/);
    // The local processor's subscription event carries the billing period, as the real one does.
    expect(await page.getByTestId('renews').textContent()).toMatch(/^[A-Z][a-z]+ \d{1,2}, \d{4}$/);
    // A plan change asks first, and Cancel changes nothing.
    await page.getByRole('button', { name: 'Move to label' }).click();
    const asked = page.getByRole('dialog', { name: 'Move to label?' });
    await asked.waitFor();
    await audit('billing plan change dialog');
    await asked.getByRole('button', { name: 'Cancel' }).click();
    await asked.waitFor({ state: 'hidden' });
    expect(await page.getByTestId('plan').textContent()).toBe('solo (active)');
  });

  it('provisions an agent named with markup and sees it become running without a reload; the name stays text', async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    // Set in this document: a reload would lose it.
    await page.evaluate('window.sameDocument = true');
    await page.getByLabel('New agent name').fill(xssName);
    await page.getByRole('button', { name: 'Provision agent' }).click();
    const row = page.getByRole('row').filter({ hasText: xssName });
    await row.waitFor();
    await row.getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
    expect(await page.evaluate('window.sameDocument')).toBe(true);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await row.getByRole('link').textContent()).toBe(xssName);
  }, 60_000);

  it('the agent page chats with the agent over its websocket, the answer streams in, and model output with <script> renders as text', async () => {
    const chatCalls = recordChatCalls(page);
    const socket = recordAgentSockets(page);
    let release!: () => void;
    const lastChunk = new Promise<void>((r) => (release = r));
    model.beforeLastChunk = () => lastChunk;
    await page.getByRole('link', { name: xssName }).click();
    await page.getByRole('heading', { name: xssName }).waitFor();
    await audit('agent');
    await section(page, 'Chat');
    await page.getByText('No messages yet: say hello below.').waitFor();
    await page.getByTestId('chat-transport').filter({ hasText: 'Connected to the agent’s websocket.' }).waitFor();
    await page.getByLabel('Message').fill(chatText);
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.locator('.chat li.assistant');
    const full = fakeAnswerTo(chatText);
    // Part of the answer is on screen while the model still holds its last piece: it streams.
    await expect.poll(async () => ((await answer.textContent()) ?? '').replace('Answer: ', ''), POLL).toMatch(/^fake answer/);
    const partial = ((await answer.textContent()) ?? '').replace('Answer: ', '');
    expect(partial.length).toBeLessThan(full.length);
    release();
    model.beforeLastChunk = undefined;
    await expect.poll(async () => ((await answer.textContent()) ?? '').replace('Answer: ', ''), POLL).toBe(full);
    expect(await page.locator('main script').count()).toBe(0);
    // The agent's websocket through the edge carried it: no platform chat call, the message went out
    // as a streamed frame and the answer came back as deltas, then done; the token never in the URL.
    expect(chatCalls).toEqual([]);
    const agentId = new URL(page.url()).pathname.split('/').at(-1)!;
    expect(socket.urls.length).toBeGreaterThan(0);
    for (const url of socket.urls) {
      expect(new URL(url).hostname).toMatch(/^agent-[0-9a-f]{16}\.agents\.localhost$/);
      expect(new URL(url).pathname).toBe(`/agents/${agentId}`);
      expect(url).not.toContain('token');
    }
    const message = socket.sent.find((f) => f.type === 'message')!;
    expect(message).toMatchObject({ content: chatText, stream: true });
    expect(socket.received.filter((f) => f.type === 'delta' && f.replyTo === message.id).length).toBeGreaterThan(0);
    // The browser reports frames to the test a little after the page has shown them.
    await expect.poll(() => socket.received.find((f) => f.type === 'done'), POLL).toMatchObject({ replyTo: message.id, message: { content: full } });
    // The runtime stores the exchange as the stream ends; the history has it after a reload.
    await expect.poll(async () => (await readHistory(page, agentId)).length, POLL).toBe(2);
    expect(await readHistory(page, agentId)).toEqual([
      ['assistant', full],
      ['user', chatText],
    ]);
    await page.reload();
    await page.getByRole('heading', { name: xssName }).waitFor();
    // The chat section is the page's address: the reload shows it again, with the stored conversation.
    await expect.poll(() => page.locator('.chat li').count(), POLL).toBe(2);
    expect((await page.locator('.chat li.user').textContent())?.replace('You: ', '')).toBe(chatText);
    expect((await page.locator('.chat li.assistant').textContent())?.replace('Answer: ', '')).toBe(full);
    // The log, rendered: each line a time, a level, a source and a message (no raw runtime JSON).
    await section(page, 'Logs');
    const line = page.locator('.log li.log-line').first();
    await line.waitFor({ timeout: 15_000 });
    expect(await line.locator('time').count()).toBe(1);
    expect(await page.locator('.log .log-message').allTextContents()).not.toContainEqual(expect.stringMatching(/^\{"level"/));
    await audit('agent logs');
  });

  it('the console opens the agent’s websocket through the edge under its own CSP, and nothing else', async () => {
    const agentId = new URL(page.url()).pathname.split('/').at(-1)!;
    const port = new URL(base).port;
    const csp = (await fetch(`${base}/agents/${agentId}`)).headers.get('content-security-policy')!;
    expect(csp).toContain(`connect-src 'self' http://*.agents.localhost:${port} ws://*.agents.localhost:${port};`);
    // As a browser client does: the subprotocol pair carries the token, since it cannot set headers on a websocket.
    const frames = (await page.evaluate(`(async () => {
      const settings = await fetch('/api/settings').then((r) => r.json());
      const { token } = await fetch('/api/instance/' + settings.id + '/token').then((r) => r.json());
      const { agent } = await fetch('/api/agents/${agentId}').then((r) => r.json());
      return await new Promise((resolve, reject) => {
        const ws = new WebSocket(agent.websocketUrl, ['agent-runtime', 'bearer.' + token]);
        const frames = [agent.websocketUrl, ws.url];
        ws.onmessage = (e) => {
          const frame = JSON.parse(e.data);
          frames.push(frame);
          if (frame.type === 'ready') ws.send(JSON.stringify({ type: 'message', content: 'over the websocket', id: 'w1' }));
          else if (frame.type === 'message' && frame.role === 'assistant') { ws.close(); resolve(frames); }
        };
        ws.onerror = () => reject(new Error('the websocket failed'));
      });
    })()`)) as [string, string, ...{ type: string; content?: string; replyTo?: string }[]];
    const [advertised, opened, ...received] = frames;
    expect(advertised).toBe(`ws://${new URL(advertised).hostname}:${port}/agents/${agentId}`);
    expect(new URL(opened).hostname).toMatch(/^agent-[0-9a-f]{16}\.agents\.localhost$/);
    expect(received[0]).toMatchObject({ type: 'ready', agentId });
    expect(received.at(-1)).toMatchObject({ type: 'message', content: fakeAnswerTo('over the websocket'), replyTo: 'w1' });
    expect(cspViolations).toEqual([]);
    // The policy is what allowed it: a websocket to any other origin is refused by the browser.
    await page.evaluate(`(() => { try { new WebSocket('ws://127.0.0.1:9/agents/x'); } catch {} })()`);
    await expect.poll(() => cspViolations.some((v) => v.includes('ws://127.0.0.1:9')), POLL).toBe(true);
    cspViolations.length = 0;
  });

  it('the chat reconnects after the edge closes its websocket with 1012, and falls back to POST /api/chat when the socket is refused', async () => {
    const agentId = new URL(page.url()).pathname.split('/').at(-1)!;
    const storedBefore = (await readHistory(page, agentId)).length;
    const transport = (p: Page, text: string) => p.getByTestId('chat-transport').filter({ hasText: text }).waitFor();
    const send = async (p: Page, text: string) => {
      await p.getByLabel('Message').fill(text);
      await p.getByRole('button', { name: 'Send' }).click();
      await expect
        .poll(async () => ((await p.locator('.chat li.assistant').last().textContent()) ?? '').replace('Answer: ', ''), POLL)
        .toBe(fakeAnswerTo(text));
    };

    // An edge restart, as the browser sees it: the open socket closes with 1012, and the chat opens a new one.
    const restarting = await context.newPage();
    try {
      const opened: WebSocketRoute[] = [];
      await restarting.routeWebSocket(/\.agents\.localhost/, (ws) => {
        opened.push(ws);
        ws.connectToServer();
      });
      const chatCalls = recordChatCalls(restarting);
      await restarting.goto(`/agents/${agentId}?tab=chat`);
      await transport(restarting, 'Connected to the agent’s websocket.');
      await opened[0]!.close({ code: 1012, reason: 'edge restarting' });
      await expect.poll(() => opened.length, POLL).toBe(2);
      await transport(restarting, 'Connected to the agent’s websocket.');
      await send(restarting, 'after the edge restarted');
      expect(chatCalls).toEqual([]);
    } finally {
      await restarting.close();
    }

    // A socket that cannot open (the edge refuses every upgrade): the chat answers through the platform.
    const refused = await context.newPage();
    try {
      let attempts = 0;
      await refused.routeWebSocket(/\.agents\.localhost/, (ws) => {
        attempts++;
        void ws.close({ code: 1008, reason: 'refused' });
      });
      const chatCalls = recordChatCalls(refused);
      await refused.goto(`/agents/${agentId}?tab=chat`);
      await expect.poll(() => attempts, POLL).toBeGreaterThan(0);
      await transport(refused, 'Through the platform');
      await send(refused, 'with the websocket refused');
      expect(chatCalls).toEqual(['POST /api/chat']);
      expect(await seriousViolations(refused)).toEqual([]);
    } finally {
      await refused.close();
    }
    await expect.poll(async () => (await readHistory(page, agentId)).length, POLL).toBe(storedBefore + 4);
    expect((await readHistory(page, agentId)).slice(0, 4)).toEqual([
      ['assistant', fakeAnswerTo('with the websocket refused')],
      ['user', 'with the websocket refused'],
      ['assistant', fakeAnswerTo('after the edge restarted')],
      ['user', 'after the edge restarted'],
    ]);
  }, 60_000);

  it('the agent page offers only the actions the state allows, asks before stopping, and a refused chat offers Start; then memory and a marketplace install, all without a reload', async () => {
    await page.evaluate('window.sameDocument = true');
    const status = page.getByTestId('agent-status');
    const lifecycle = page.getByRole('group', { name: 'Lifecycle' });
    const enabled = async () =>
      Object.fromEntries(
        await Promise.all(
          ['Start', 'Stop', 'Restart', 'Update runtime', 'Repair', 'Reset memory', 'Delete agent'].map(
            async (name) => [name, await lifecycle.getByRole('button', { name, exact: true }).isEnabled()] as const,
          ),
        ),
      );
    await section(page, 'Overview');
    expect(await enabled()).toEqual({
      Start: false,
      Stop: true,
      Restart: true,
      'Update runtime': true,
      Repair: false,
      'Reset memory': true,
      'Delete agent': true,
    });
    await lifecycle.getByRole('button', { name: 'Stop', exact: true }).click();
    const asked = page.getByRole('dialog', { name: 'Stop the agent?' });
    await asked.waitFor();
    await audit('agent stop dialog');
    await asked.getByRole('button', { name: 'Stop', exact: true }).click();
    await lifecycle.getByRole('status').filter({ hasText: 'Stopped: the agent no longer answers until you start it.' }).waitFor({ timeout: 20_000 });
    await expect.poll(() => status.textContent(), POLL).toBe('stopped');
    expect(await enabled()).toEqual({
      Start: true,
      Stop: false,
      Restart: false,
      'Update runtime': false,
      Repair: false,
      'Reset memory': true,
      'Delete agent': true,
    });
    // Stopped: no address to reach and no start time.
    await page.getByText('Reachable once the agent runs.').waitFor();
    expect(await page.locator('dl.facts dt').allTextContents()).not.toContain('Started');

    // A message to a stopped agent is refused in words, with Start beside them.
    await section(page, 'Chat');
    await page.getByLabel('Message').fill('are you there?');
    await page.getByRole('button', { name: 'Send' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'The agent is not running' });
    await refused.waitFor();
    await refused.getByRole('button', { name: 'Start the agent' }).click();
    await lifecycle.getByRole('status').filter({ hasText: 'Started: the agent is running and answers.' }).waitFor({ timeout: 20_000 });
    await expect.poll(() => status.textContent(), POLL).toBe('running');
    expect((await enabled()).Start).toBe(false);

    await section(page, 'Memory');
    const memory = page.locator('.panel').filter({ has: page.getByRole('heading', { name: 'Memory' }) });
    await memory.getByLabel('Key', { exact: true }).fill('favourite');
    await memory.getByLabel('Value (JSON)').fill('{"colour":"<b>blue</b>"}');
    await memory.getByRole('button', { name: 'Save key' }).click();
    await memory.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = memory.getByRole('row').filter({ hasText: 'favourite' });
    await expect.poll(() => saved.locator('td').nth(1).textContent(), POLL).toBe('{"colour":"<b>blue</b>"}');
    expect(await memory.locator('b').count()).toBe(0);

    await page.getByRole('link', { name: 'Marketplace', exact: true }).click();
    const card = page.getByRole('list', { name: 'Skills' }).getByRole('listitem').first();
    const skillName = (await card.getByRole('heading').textContent())!;
    const catalogue = (await page.evaluate("fetch('/api/skills').then((r) => r.json())")) as { skills: { id: string; name: string }[] };
    const skillId = catalogue.skills.find((skill) => skill.name === skillName)!.id;
    await card.getByRole('button', { name: `Install ${skillName}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${skillName} installed.` })
      .waitFor();
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: xssName }).click();
    await section(page, 'Skills');
    const installed = page.locator('.panel').filter({ has: page.getByRole('heading', { name: 'Installed skills' }) });
    await installed.getByRole('listitem').filter({ hasText: skillId }).waitFor();
    await expect.poll(() => installed.locator('p').first().textContent(), POLL).toMatch(/^1 of \d+ skills\./);
    expect(await page.evaluate('window.sameDocument')).toBe(true);
  }, 60_000);

  it('creates an API key that is shown once', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByText('No API keys yet').waitFor();
    expect(await page.locator('main').textContent()).not.toContain('`');
    await page.getByLabel('Key name').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => page.getByTestId('new-key').textContent(), POLL).toMatch(/^sk_/);
    await audit('keys');
  });

  it('shows the tokens of the chat in the usage chart', async () => {
    await page.getByRole('link', { name: 'Billing' }).click();
    await expect.poll(async () => Number(await page.getByTestId('total-tokens').textContent()), POLL).toBeGreaterThan(0);
    // The charts draw after the figures arrive, and later still on a loaded machine.
    await expect.poll(() => page.locator('.chart canvas').count(), POLL).toBe(2);
    const tokensCell = page
      .getByRole('row')
      .filter({ hasText: new Date().toISOString().slice(0, 10) })
      .locator('td')
      .nth(3);
    expect(Number(await tokensCell.textContent())).toBeGreaterThan(0);
    await audit('billing with usage');
  });

  it("provisioning beyond the plan's agents says so in words: current of limit", async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    // solo allows 3: two more fit, the next one is refused with 429 {current, limit}.
    for (const name of ['second agent', 'third agent']) {
      await page.getByLabel('New agent name').fill(name);
      await page.getByRole('button', { name: 'Provision agent' }).click();
      await page.getByRole('row').filter({ hasText: name }).waitFor();
    }
    await page.getByLabel('New agent name').fill('one too many');
    await page.getByRole('button', { name: 'Provision agent' }).click();
    await page.getByRole('alert').filter({ hasText: 'Your plan allows 3 agents and you have 3 of 3.' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'one too many' }).count()).toBe(0);
  });

  it('the wallet page creates the wallet and shows its address', async () => {
    await page.getByRole('link', { name: 'Wallet', exact: true }).click();
    expect(await page.locator('main').textContent()).not.toContain('POST /api/wallet');
    await page.getByRole('button', { name: 'Create wallet' }).click();
    await page.getByRole('status').filter({ hasText: 'Wallet created.' }).waitFor();
    const address = await page.locator('.facts code').textContent();
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    const stored = (await page.evaluate("fetch('/api/wallet').then((r) => r.json())")) as { address: string };
    expect(stored.address).toBe(address);
    await audit('wallet');
  });

  it('the settings forms save the profile, the password, the notifications and a webhook endpoint, and show the result', async () => {
    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    await audit('settings');
    const profile = page.locator('form.panel').filter({ has: page.getByRole('heading', { name: 'Profile' }) });
    await profile.getByLabel('Name').fill('Console Tester');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await profile.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();

    const passwordForm = page.locator('form.panel').filter({ has: page.getByRole('heading', { name: 'Password' }) });
    await passwordForm.getByLabel('Current password').fill('not-the-password');
    await passwordForm.getByLabel('New password').fill(`${password}-2`);
    await passwordForm.getByRole('button', { name: 'Change password' }).click();
    await passwordForm.getByRole('alert').filter({ hasText: 'The current password is not right' }).waitFor();
    // "Also revoke API keys" is offered, checked, in both forms, and the change sends it.
    expect(await passwordForm.getByLabel('Also revoke API keys').isChecked()).toBe(true);
    const everywhereForm = page.locator('form.panel').filter({ has: page.getByRole('heading', { name: 'Sign out everywhere' }) });
    expect(await everywhereForm.getByLabel('Also revoke API keys').isChecked()).toBe(true);
    await passwordForm.getByLabel('Current password').fill(password);
    const sent = page.waitForRequest((r) => r.url().endsWith('/api/settings/password') && r.method() === 'POST');
    await passwordForm.getByRole('button', { name: 'Change password' }).click();
    expect((await sent).postDataJSON()).toMatchObject({ revokeApiKeys: true });
    await passwordForm.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();

    const notifications = page.locator('fieldset.panel');
    await notifications.getByLabel('Product updates').check();
    await notifications.getByRole('status').filter({ hasText: 'Preferences saved.' }).waitFor();

    const hooks = page.locator('.panel').filter({ has: page.getByRole('heading', { name: 'Webhook endpoints' }) });
    await hooks.getByLabel('Endpoint URL').fill('https://hooks.example.com/console-test');
    await hooks.getByRole('button', { name: 'Add endpoint' }).click();
    await hooks.getByText('Signing secret (shown once):').waitFor();
    const endpoint = hooks.getByRole('listitem').filter({ hasText: 'https://hooks.example.com/console-test' });
    await endpoint.waitFor();
    // The delivery log opens under the endpoint; the list is the same component as the MCP clients'.
    await endpoint.getByText('Delivery log').click();
    await expect
      .poll(async () => (await endpoint.getByRole('button', { name: /^Redeliver/ }).count()) + (await endpoint.getByText('Nothing sent yet').count()), POLL)
      .toBeGreaterThan(0);
    const clients = page.locator('.panel').filter({ has: page.getByRole('heading', { name: 'Connected MCP clients' }) });
    await clients.locator('p.empty').filter({ hasText: 'No connected clients.' }).waitFor();
    // A checkbox sits beside its label, not stretched above it.
    const box = await notifications.getByLabel('Product updates').boundingBox();
    const label = await notifications.getByText('Product updates').boundingBox();
    expect(box!.width).toBeLessThan(40);
    expect(Math.abs(box!.y + box!.height / 2 - (label!.y + label!.height / 2))).toBeLessThan(8);

    // What was saved is what the account now holds, after a reload.
    await page.reload();
    await expect.poll(() => page.getByLabel('Name').inputValue(), POLL).toBe('Console Tester');
    expect(await page.getByLabel('Product updates').isChecked()).toBe(true);
    await page.getByRole('listitem').filter({ hasText: 'https://hooks.example.com/console-test' }).waitFor();
    const signIn = await fetch(`${base}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: `${password}-2` }),
    });
    expect(signIn.status).toBe(200);
  });

  it('every view passes axe at 1280 px and at 390 px, and none scrolls sideways on a phone', async () => {
    await page.getByRole('link', { name: 'Marketplace', exact: true }).click();
    await audit('marketplace');
    expect(await page.evaluate("getComputedStyle(document.querySelector('ul.grid')).listStyleType")).toBe('none');
    const agentId = (await listAgentsOf(page))[0]!;
    const views = [
      '/',
      ...['overview', 'chat', 'logs', 'events', 'schedules', 'budget', 'skills', 'memory', 'checkpoints', 'settings'].map(
        (tab) => `/agents/${agentId}?tab=${tab}`,
      ),
      '/marketplace',
      '/keys',
      '/settings/billing',
      '/wallet',
      '/settings',
    ];
    const sideways: string[] = [];
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      for (const view of views) {
        await page.goto(view);
        await page.locator('main h1').first().waitFor();
        await expect.poll(() => page.getByText('Loading…', { exact: true }).count(), { ...POLL, message: `${view} still loading` }).toBe(0);
        audited[`${view} at ${viewport.width} px`] = await seriousViolations(page);
        if (!(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'))) sideways.push(`${view} at ${viewport.width} px`);
      }
    }
    expect(sideways).toEqual([]);
    await page.setViewportSize(DESKTOP);
  }, 120_000);

  it('signs out: the session is gone', async () => {
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(/\/sign-in/);
    expect(await page.evaluate("fetch('/api/settings').then((r) => r.status)")).toBe(401);
    await page.goto('/reset-password?token=from-the-email');
    await audit('reset-password');
    await page.setViewportSize(PHONE);
    for (const view of ['/sign-in', '/sign-up', '/reset-password?token=from-the-email']) {
      await page.goto(view);
      await audit(`${view} (phone)`);
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), view).toBe(true);
    }
    await page.setViewportSize(DESKTOP);
  });

  it('the gateway receipt page shows the token from the fragment, copies it and says how to use it, without a session', async () => {
    const token = 'gwr_FragmentOnly_0123456789abcdef';
    await page.goto('/gateway/receipt?plugin=generate-text&checkout=success#receipt=' + token);
    await expect.poll(() => page.getByTestId('receipt').textContent(), POLL).toBe(token);
    await expect.poll(() => page.locator('main').textContent(), POLL).toContain(`Authorization: Bearer ${token} on POST /api/v1/gateway`);
    await page.getByRole('button', { name: 'Copy receipt token' }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(token);
    await audit('gateway receipt');
    await page.goto('/gateway/receipt?plugin=generate-text&checkout=cancelled');
    await page.getByRole('heading', { name: 'Gateway call not bought' }).waitFor();
  });

  it('signs in with an injected EIP-1193 wallet (SIWE), and shows no OAuth button when no provider is configured', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const walletContext = await browser.newContext({ baseURL: base });
    try {
      // The wallet signs in the test process; the page sees a plain EIP-1193 provider with a lower-case address.
      await walletContext.exposeFunction('testWalletSign', (hex: `0x${string}`) => account.signMessage({ message: { raw: hex } }));
      await walletContext.addInitScript(`window.ethereum = { request: async ({ method, params }) =>
        method === 'eth_requestAccounts' ? ['${account.address.toLowerCase()}'] :
        method === 'personal_sign' ? window.testWalletSign(params[0]) : Promise.reject(new Error('unsupported: ' + method)) };`);
      const walletPage = await walletContext.newPage();
      const apiCalls: string[] = [];
      walletPage.on('request', (request) => apiCalls.push(new URL(request.url()).pathname));
      walletPage.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await walletPage.goto('/sign-in');
      await walletPage.getByRole('button', { name: 'Sign in with a wallet' }).click();
      await walletPage.getByRole('heading', { name: 'Your agents' }).waitFor();
      const settings = (await walletPage.evaluate("fetch('/api/settings').then((r) => r.json())")) as { email: string };
      expect(settings.email).toBe(`${account.address.toLowerCase()}@wallet.local`);
      await walletPage.goto('/sign-in');
      await walletPage.getByRole('button', { name: 'Sign in with a wallet' }).waitFor();
      expect(await walletPage.getByRole('link', { name: /Sign in with the code host|Sign in with web identity/ }).count()).toBe(0);
      // The buttons come from the public provider list: loading the sign-in page starts no OAuth flow.
      expect(apiCalls).toContain('/api/auth/providers');
      expect(apiCalls.filter((p) => p.startsWith('/api/auth/oauth-'))).toEqual([]);
    } finally {
      await walletContext.close();
    }
  });

  it('no dialog opened, no CSP violation, and no page had a serious or critical axe violation', () => {
    expect(dialogs).toEqual([]);
    expect(cspViolations).toEqual([]);
    expect(Object.keys(audited).length).toBeGreaterThanOrEqual(12);
    expect(Object.entries(audited).filter(([, v]) => v.length > 0)).toEqual([]);
  });
});
