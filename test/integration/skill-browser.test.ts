import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/browser';
import { reloadConfig } from '#platform/config';
import { startCountingServer } from '../helpers/counting-server';
import { call, subscribedSession, uniqueIp } from '../helpers/api';
import { newTestUserId, runSkill } from '../helpers/skill-call';

const PAGE = `<!doctype html>
<html><head><title>  Nova Lane &amp; Friends — Tour </title>
<style>body { color: red }</style><script>var secret = "do not show";</script></head>
<body>
  <h1>Summer tour</h1>
  <p>Tickets on   sale <b>Friday</b>.</p>
  <noscript>enable scripts</noscript>
  <ul>
    <li><a href="/dates?year=2025#top">All dates</a></li>
    <li><a href="leeds.html">Leeds</a></li>
    <li><a href="https://tickets.example.com/nova">Tickets</a></li>
    <li><a href="javascript:alert(1)">Bad</a></li>
    <li><a href="mailto:press@example.com">Press</a></li>
    <li><a href="/dates?year=2025">All dates again</a></li>
  </ul>
  <script>document.write("nor this")</script>
</body></html>`;

describe('browser', () => {
  let site: Awaited<ReturnType<typeof startCountingServer>>;
  let internal: Awaited<ReturnType<typeof startCountingServer>>;

  beforeAll(async () => {
    internal = await startCountingServer((_req, res) => res.end('internal admin page'));
    site = await startCountingServer((req, res) => {
      if (req.url === '/tour/') {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        return res.end(PAGE);
      }
      if (req.url === '/long') {
        res.setHeader('content-type', 'text/plain');
        return res.end('la '.repeat(1000));
      }
      if (req.url === '/image') {
        res.setHeader('content-type', 'image/png');
        return res.end(Buffer.alloc(10));
      }
      if (req.url?.startsWith('/to-unparsable')) {
        // Sent as is: a Location the WHATWG parser refuses.
        res.writeHead(302, { location: req.url.endsWith('zone') ? 'http://[::1%25lo]:1/' : 'http://exa mple.test/' });
        return res.end();
      }
      if (req.url === '/to-internal') {
        res.writeHead(302, { location: internal.url('/admin') });
        return res.end();
      }
      res.statusCode = 404;
      res.setHeader('content-type', 'text/html');
      res.end('<title>Not found</title><p>No such page</p>');
    });
    reloadConfig({ FETCH_ALLOWED_LOOPBACK: site.hostPort });
  });

  afterAll(async () => {
    reloadConfig({ FETCH_ALLOWED_LOOPBACK: undefined });
    await Promise.all([site.close(), internal.close()]);
  });

  it('returns the title, the readable text without scripts or styles, and absolute links', async () => {
    const { status, body } = await runSkill(skill, newTestUserId(), { action: 'fetch', url: site.url('/tour/') });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, url: site.url('/tour/'), status: 200, contentType: 'text/html', title: 'Nova Lane & Friends — Tour' });
    expect(body.text).toBe('Summer tour\nTickets on sale Friday.\nAll dates\nLeeds\nTickets\nBad\nPress\nAll dates again');
    expect(body.text).not.toMatch(/secret|nor this|color|enable scripts/);
    expect(body.links).toEqual([
      { url: site.url('/dates?year=2025'), text: 'All dates' },
      { url: site.url('/tour/leeds.html'), text: 'Leeds' },
      { url: 'https://tickets.example.com/nova', text: 'Tickets' },
    ]);
    expect(body).toMatchObject({ linkCount: 3, linksTruncated: false, textTruncated: false, pageTruncated: false });
  });

  it('caps the text and says so; the body without action defaults to fetch', async () => {
    const { body } = await runSkill(skill, newTestUserId(), { url: site.url('/long'), maxChars: 100 });
    expect(body).toMatchObject({ contentType: 'text/plain', textTruncated: true, textLength: 2999 });
    expect(body.text).toHaveLength(100);
  });

  it('reports the status of a missing page and refuses content that is not text', async () => {
    expect((await runSkill(skill, newTestUserId(), { action: 'fetch', url: site.url('/missing') })).body).toMatchObject({
      status: 404,
      title: 'Not found',
      text: 'No such page',
    });
    expect(await runSkill(skill, newTestUserId(), { action: 'fetch', url: site.url('/image') })).toMatchObject({
      status: 400,
      body: { code: 'UNSUPPORTED_CONTENT' },
    });
  });

  it('never reaches loopback or metadata addresses, not even through a redirect', async () => {
    for (const url of [internal.url('/admin'), `http://localhost:${internal.port}/`, 'http://169.254.169.254/latest/meta-data/', site.url('/to-internal')]) {
      expect(await runSkill(skill, newTestUserId(), { action: 'fetch', url }), url).toMatchObject({ status: 400, body: { code: 'URL_NOT_ALLOWED' } });
    }
    expect(internal.connections()).toBe(0);
  });

  it('answers a redirect to an unparsable Location with 400 URL_NOT_ALLOWED, logging no stack trace', async () => {
    const session = await subscribedSession();
    const written: string[] = [];
    const originals = { out: process.stdout.write, err: process.stderr.write };
    const capture = (chunk: unknown) => {
      written.push(String(chunk));
      return true;
    };
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
    let answers: Awaited<ReturnType<typeof call>>[];
    try {
      answers = [];
      for (const path of ['/to-unparsable-zone', '/to-unparsable-space'])
        answers.push(await call('POST', '/api/skills/browser', { session, body: { action: 'fetch', url: site.url(path) }, ip: uniqueIp() }));
    } finally {
      process.stdout.write = originals.out;
      process.stderr.write = originals.err;
    }
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(400);
      expect(answer.body.code).toBe('URL_NOT_ALLOWED');
    }
    expect(written.join('')).not.toMatch(/\n\s+at /);
  });

  it('refuses invalid bodies with the issues', async () => {
    for (const body of [
      { action: 'fetch' },
      { action: 'fetch', url: 'file:///etc/passwd' },
      { action: 'fetch', url: site.url('/'), maxChars: 5 },
      { action: 'crawl', url: site.url('/') },
      { action: 'fetch', url: site.url('/'), extra: 1 },
    ]) {
      const out = await runSkill(skill, newTestUserId(), body);
      expect(out.status, JSON.stringify(body)).toBe(400);
    }
  });
});
