import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack, stopLocalStack } from '../helpers/local-stack';
import { launchChromium, recordAgentSockets, seriousViolations } from './console-browser';

/**
 * A newcomer's first run, in a real browser against `npm start` with NO settings at all (a fresh
 * data folder only): sign up, confirm the address from the local mail page, subscribe through the
 * local checkout, provision, see the agent running without a reload, chat with the built-in model
 * and watch the answer stream, reload and find the conversation, read the log, then stop (confirmed)
 * and start again, with only the valid lifecycle buttons enabled at each step.
 */
const POLL = { timeout: 20_000, interval: 100 };
const LIFECYCLE_BUTTONS = ['Start', 'Stop', 'Restart', 'Update runtime', 'Repair', 'Reset memory', 'Delete agent'];

describe('the console on a stack started with no settings', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-first-run-'));
  let stack: LocalStack;
  let browser: Browser;
  let page: Page;
  const violations: Record<string, unknown[]> = {};
  const audit = async (name: string) => {
    await page.locator('main h1').first().waitFor();
    violations[name] = await seriousViolations(page);
  };
  const enabledActions = async () => {
    const lifecycle = page.getByRole('group', { name: 'Lifecycle' });
    const enabled: string[] = [];
    for (const name of LIFECYCLE_BUTTONS) if (await lifecycle.getByRole('button', { name, exact: true }).isEnabled()) enabled.push(name);
    return enabled;
  };

  beforeAll(async () => {
    browser = await launchChromium();
    stack = startLocalStack({ DATA_DIR: dataDir });
    const base = await stack.ready;
    const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stopLocalStack(stack, dataDir);
  });

  it('signs up and confirms the address from the local mail page the dashboard links to', async () => {
    await page.goto('/sign-up');
    await page.getByLabel('Email').fill('newcomer@example.com');
    await page.getByLabel('Password').fill('correct-horse-battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    const checklist = page.getByRole('region', { name: 'Getting started' });
    await checklist.getByText('Open the confirmation link we sent to newcomer@example.com.').waitFor();
    await checklist.getByRole('link', { name: 'Open the local mailbox' }).click();
    await audit('local mail');
    await page.locator('a[href*="/verify-email?token="]').first().click();
    await page.getByRole('status').filter({ hasText: 'Your email address is confirmed.' }).waitFor();
    await page.getByRole('link', { name: 'Go to your agents' }).click();
    await checklist.getByText('1 of 5 done.').waitFor();
  });

  it('subscribes through the local checkout from the checklist', async () => {
    await page.getByRole('region', { name: 'Getting started' }).getByRole('link', { name: 'See the plans' }).click();
    await audit('billing');
    await page.getByRole('button', { name: 'Subscribe to solo' }).click();
    await page.waitForURL(/\/local-card\/checkout\//);
    await page.getByRole('button', { name: 'Pay (local test)' }).click();
    await page.waitForURL(/\/settings\/billing\?checkout=success/);
    await page.getByTestId('plan').filter({ hasText: 'solo (active)' }).waitFor();
  });

  it('provisions an agent and sees it running without a reload', async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.evaluate('window.sameDocument = true');
    await page.getByLabel('New agent name').fill('First agent');
    await page.getByRole('button', { name: 'Provision agent' }).click();
    const row = page.getByRole('row').filter({ hasText: 'First agent' });
    await row.getByText('running', { exact: true }).waitFor({ timeout: 60_000 });
    expect(await page.evaluate('window.sameDocument')).toBe(true);
    await audit('dashboard');
  }, 90_000);

  it('chats with the built-in model, the answer streaming in pieces, and finds the conversation after a reload', async () => {
    const sockets = recordAgentSockets(page);
    await page.getByRole('link', { name: 'First agent' }).click();
    await page.getByRole('navigation', { name: 'Agent sections' }).getByRole('link', { name: 'Chat', exact: true }).click();
    await page.getByTestId('chat-transport').filter({ hasText: 'Connected to the agent’s websocket.' }).waitFor({ timeout: 20_000 });
    await page.getByLabel('Message').fill('Hello, who are you?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => sockets.sent.find((f) => f.type === 'message'), POLL).toBeTruthy();
    const sent = sockets.sent.find((f) => f.type === 'message')!;
    await expect.poll(() => sockets.received.find((f) => f.type === 'done' && f.replyTo === sent.id), POLL).toBeTruthy();
    expect(sockets.received.filter((f) => f.type === 'delta' && f.replyTo === sent.id).length).toBeGreaterThan(1);
    const answer = ((await page.locator('.chat li.assistant').last().textContent()) ?? '').replace('Answer: ', '');
    expect(answer).toMatch(/built-in/i);
    await page.reload();
    await expect.poll(() => page.locator('.chat li').count(), POLL).toBe(2);
    expect((await page.locator('.chat li.user').textContent())?.replace('You: ', '')).toBe('Hello, who are you?');
    await audit('agent chat');
  }, 60_000);

  it('reads the log as rendered lines', async () => {
    await page.getByRole('navigation', { name: 'Agent sections' }).getByRole('link', { name: 'Logs', exact: true }).click();
    await page.locator('.log li.log-line').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('.log li.log-line time').count()).toBeGreaterThan(0);
    await audit('agent logs');
  });

  it('stops (after confirming) and starts again, with only the valid actions enabled', async () => {
    await page.getByRole('navigation', { name: 'Agent sections' }).getByRole('link', { name: 'Overview', exact: true }).click();
    expect(await enabledActions()).toEqual(['Stop', 'Restart', 'Update runtime', 'Reset memory', 'Delete agent']);
    const lifecycle = page.getByRole('group', { name: 'Lifecycle' });
    await lifecycle.getByRole('button', { name: 'Stop', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Stop the agent?' });
    await dialog.getByRole('button', { name: 'Stop', exact: true }).click();
    await lifecycle.getByRole('status').filter({ hasText: 'Stopped: the agent no longer answers until you start it.' }).waitFor({ timeout: 30_000 });
    expect(await enabledActions()).toEqual(['Start', 'Reset memory', 'Delete agent']);
    await page.getByText('Reachable once the agent runs.').waitFor();
    await lifecycle.getByRole('button', { name: 'Start', exact: true }).click();
    await lifecycle.getByRole('status').filter({ hasText: 'Started: the agent is running and answers.' }).waitFor({ timeout: 30_000 });
    expect(await enabledActions()).toEqual(['Stop', 'Restart', 'Update runtime', 'Reset memory', 'Delete agent']);
  }, 90_000);

  it('had no serious or critical axe violation on the way', () => {
    expect(Object.entries(violations).filter(([, v]) => v.length > 0)).toEqual([]);
  });
});
