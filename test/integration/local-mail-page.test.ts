import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sendEmail } from '#adapters/email';
import { loadGroupHandler } from '#local/handlers';
import { mailPage } from '#local/mail-page';
import { matchPage } from '#local/pages';
import { createLocalServer } from '#local/server';
import { reloadConfig } from '#platform/config';
import { call, uniqueIp } from '../helpers/api';
import { register, uniqueEmail } from './accounts-helpers';

/**
 * The local stack's mailbox over real HTTP (`GET /_local/mail` and `.json`): a sign-up's confirmation
 * link shows there as a link that confirms the address, bodies are escaped, mail is newest first, and
 * the page exists only on the local stack writing to its outbox; `GET /api/auth/providers` and the
 * JSON index at `/api` name it there and nowhere else.
 */

const previous = { outbox: process.env.OUTBOX_DIR };
const LOCAL = { STAGE: 'local', OUTBOX_DIR: mkdtempSync(path.join(tmpdir(), 'local-mail-page-')) };
let base = '';
let close: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  const server = createLocalServer(loadGroupHandler, (err) => console.error(err), matchPage);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise<void>((resolve) => server.close(() => resolve()));
});
afterEach(() => reloadConfig({ STAGE: 'test', OUTBOX_DIR: previous.outbox, SES_ENDPOINT: undefined }));
afterAll(() => close());

interface ShownMail {
  to: string;
  subject: string;
  text: string;
  createdAt: string;
  links: string[];
}
const mailJson = async (query = '') => {
  const res = await fetch(`${base}/_local/mail.json${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { mails: ShownMail[] }).mails;
};
const mailHtml = async (query = '') => {
  const res = await fetch(`${base}/_local/mail${query}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/html');
  return res.text();
};

describe('the local mailbox', () => {
  it('shows a sign-up’s confirmation mail with its link clickable, and that link confirms the address', async () => {
    reloadConfig(LOCAL);
    const email = uniqueEmail('mailbox');
    expect((await register(email)).status).toBe(201);

    const [mail] = await mailJson(`?to=${encodeURIComponent(email)}`);
    expect(mail).toMatchObject({ to: email, subject: 'Confirm your email address' });
    const link = mail!.links.find((l) => l.includes('/verify-email?token='));
    expect(link).toBeDefined();

    const html = await mailHtml(`?to=${encodeURIComponent(email)}`);
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(html).toContain('<h1>Local mailbox</h1>');
    expect(html).toContain('<h2 id="mail-0">Confirm your email address</h2>');
    expect(html).toContain(`<dd>${email}</dd>`);
    expect(html).toContain(`<time datetime="${mail!.createdAt}">`);
    expect(html).toContain(`<a href="${link}">${link}</a>`);
    expect(html).toContain('<label for="to">');

    const token = new URL(link!).searchParams.get('token');
    const verified = await call('POST', '/api/auth/verify-email', { body: { token }, ip: uniqueIp() });
    expect(verified.status, verified.text).toBe(200);
  });

  it('escapes what a mail carries, links included, and runs nothing', async () => {
    reloadConfig(LOCAL);
    const to = uniqueEmail('escape');
    await sendEmail({ to, subject: '<b>Hi</b> & "you"', text: '<script>alert(1)</script>\nSee http://127.0.0.1:3000/a?x=1&y="2" now.\n' });
    const res = await fetch(`${base}/_local/mail?to=${encodeURIComponent(to)}`);
    const html = await res.text();
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>Hi');
    expect(html).toContain('&#60;b&#62;Hi&#60;/b&#62; &#38; &#34;you&#34;');
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    // The link ends where the quote starts, and the sentence's full stop is not part of it.
    expect(html).toContain('<a href="http://127.0.0.1:3000/a?x=1&#38;y=">http://127.0.0.1:3000/a?x=1&#38;y=</a>&#34;2&#34; now.');
    expect((await mailJson(`?to=${encodeURIComponent(to)}`))[0]!.links).toEqual(['http://127.0.0.1:3000/a?x=1&y=']);
  });

  it('lists mail newest first, and says so when there is none', async () => {
    reloadConfig(LOCAL);
    const to = uniqueEmail('order');
    expect(await mailHtml(`?to=${encodeURIComponent(to)}`)).toContain(`No mail to ${to} yet.`);
    await sendEmail({ to, subject: 'older', text: 'one' });
    await sendEmail({ to, subject: 'newer', text: 'two' });
    expect((await mailJson(`?to=${encodeURIComponent(to)}`)).map((m) => m.subject)).toEqual(['newer', 'older']);
    const html = await mailHtml(`?to=${encodeURIComponent(to)}`);
    expect(html).toContain('<h2 id="mail-0">newer</h2>');
    expect(html).toContain('<h2 id="mail-1">older</h2>');
  });

  it('is not there outside the local stack, nor where mail goes through SES', async () => {
    for (const settings of [{}, { ...LOCAL, SES_ENDPOINT: 'http://127.0.0.1:9/' }]) {
      reloadConfig({ STAGE: 'test', ...settings });
      const page = await fetch(`${base}/_local/mail`);
      expect(page.status).toBe(404);
      expect(await page.text()).toContain('This server keeps no local mailbox');
      const json = await fetch(`${base}/_local/mail.json`);
      expect(json.status).toBe(404);
      expect(await json.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('answers only a client on this machine', async () => {
    reloadConfig(LOCAL);
    expect((await mailPage(new URL('http://local/_local/mail'), undefined)).status).toBe(403);
    expect((await mailPage(new URL('http://local/_local/mail'), '::1')).status).toBe(200);
  });
});

describe('GET /api/auth/providers and the local mailbox', () => {
  const providers = async () => (await call('GET', '/api/auth/providers', { ip: uniqueIp() })).body as Record<string, unknown>;

  it('names the mail page on the local stack only', async () => {
    reloadConfig(LOCAL);
    expect((await providers()).localMailUrl).toBe('/_local/mail');
    const index = (await (await fetch(`${base}/api`, { headers: { accept: 'application/json' } })).json()) as { mail?: string };
    expect(index.mail).toMatch(/^\/_local\/mail: /);
    reloadConfig({ ...LOCAL, SES_ENDPOINT: 'http://127.0.0.1:9/' });
    expect(await providers()).not.toHaveProperty('localMailUrl');
    reloadConfig({ STAGE: 'test', SES_ENDPOINT: undefined });
    expect(await providers()).not.toHaveProperty('localMailUrl');
    expect(await (await fetch(`${base}/api`, { headers: { accept: 'application/json' } })).json()).not.toHaveProperty('mail');
    reloadConfig({ STAGE: 'aws' });
    expect(await providers()).not.toHaveProperty('localMailUrl');
  });
});
