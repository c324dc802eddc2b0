import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, reloadConfig } from '#platform/config';
import { FetchFailedError, guardedFetch, UrlNotAllowedError } from '#adapters/guarded-fetch';
import { isBlockedAddress } from '#adapters/url-guard';
import { startCountingServer } from '../helpers/counting-server';

type Server = Awaited<ReturnType<typeof startCountingServer>>;

describe('guarded fetch of user-supplied URLs', () => {
  let target: Server;
  let targetV6: Server;
  let allowed: Server;

  beforeAll(async () => {
    // The target stands for the network behind the platform: it is NOT allowed, and must see no connection.
    target = await startCountingServer((_req, res) => res.end('internal'));
    targetV6 = await startCountingServer((_req, res) => res.end('internal'), '::1');
    // A loopback fake that is allowed: it plays a public site whose pages redirect.
    allowed = await startCountingServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/to') {
        res.writeHead(302, { location: url.searchParams.get('u')! });
        return res.end();
      }
      if (url.pathname === '/loop') {
        res.writeHead(301, { location: '/loop' });
        return res.end();
      }
      if (url.pathname === '/big') return res.end('x'.repeat(50_000));
      if (url.pathname === '/slow') return setTimeout(() => res.end('late'), 2000).unref();
      if (url.pathname === '/echo') {
        let body = '';
        req.on('data', (c) => (body += c));
        return req.on('end', () => res.end(`${req.method} ${body}`));
      }
      res.setHeader('content-type', 'text/plain');
      res.end('public page');
    });
    reloadConfig({ FETCH_ALLOWED_LOOPBACK: allowed.hostPort });
  });

  afterAll(async () => {
    reloadConfig({ FETCH_ALLOWED_LOOPBACK: undefined });
    await Promise.all([target.close(), targetV6.close(), allowed.close()]);
  });

  it('fetches an allowed page and follows a redirect that stays allowed', async () => {
    const page = await guardedFetch(allowed.url('/page'));
    expect(page).toMatchObject({ status: 200, truncated: false });
    expect(page.body.toString()).toBe('public page');
    const redirected = await guardedFetch(allowed.url(`/to?u=${encodeURIComponent('/page')}`));
    expect(redirected.url).toBe(allowed.url('/page'));
    expect(redirected.body.toString()).toBe('public page');
    expect((await guardedFetch(allowed.url('/echo'), { method: 'POST', body: 'hi' })).body.toString()).toBe('POST hi');
  });

  it('refuses every form of a loopback, private or metadata address without connecting', async () => {
    const port = target.port;
    const refused = [
      `http://127.0.0.1:${port}/`,
      `http://2130706433:${port}/`,
      `http://0x7f000001:${port}/`,
      `http://0x7f.0.0.1:${port}/`,
      `http://0177.0.0.1:${port}/`,
      `http://127.1:${port}/`,
      `http://localhost:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`,
      `http://[64:ff9b::7f00:1]:${port}/`,
      `http://0.0.0.0:${port}/`,
      `http://[::]:${port}/`,
      `http://169.254.169.254/latest/meta-data/`,
      `http://[::ffff:169.254.169.254]/`,
      `http://10.0.0.1/`,
      `http://192.168.1.1/`,
      `http://172.16.0.1/`,
      `http://100.64.0.1/`,
      `http://[fd00::1]/`,
      `http://[fe80::1]/`,
      // IPv4-translated (::ffff:0:0/96) and other forms outside global unicast.
      `http://[::ffff:0:127.0.0.1]:${port}/`,
      `http://[::ffff:0:7f00:1]:${port}/`,
      `http://[100::1]:${port}/`,
      `http://[4000::1]/`,
    ];
    for (const url of refused) await expect(guardedFetch(url), url).rejects.toBeInstanceOf(UrlNotAllowedError);
    await expect(guardedFetch(`http://[::1]:${targetV6.port}/`)).rejects.toBeInstanceOf(UrlNotAllowedError);
    await expect(guardedFetch(`http://localhost:${targetV6.port}/`)).rejects.toBeInstanceOf(UrlNotAllowedError);
    expect(target.connections()).toBe(0);
    expect(targetV6.connections()).toBe(0);
  });

  it('re-checks every redirect hop: a public page redirecting to loopback or metadata never reaches it', async () => {
    const before = allowed.connections();
    for (const hop of [
      `http://127.0.0.1:${target.port}/`,
      `http://2130706433:${target.port}/`,
      `http://localhost:${target.port}/`,
      'http://169.254.169.254/',
    ]) {
      await expect(guardedFetch(allowed.url(`/to?u=${encodeURIComponent(hop)}`)), hop).rejects.toBeInstanceOf(UrlNotAllowedError);
    }
    expect(allowed.connections() - before).toBe(4);
    expect(target.connections()).toBe(0);
  });

  it('refuses other schemes and credentials, and caps redirects, size and time', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://example.com/', 'not a url', `http://user:pw@${allowed.hostPort}/`])
      await expect(guardedFetch(url), url).rejects.toBeInstanceOf(UrlNotAllowedError);
    await expect(guardedFetch(allowed.url('/loop'), { maxRedirects: 3 })).rejects.toThrow('more than 3 redirects');
    const big = await guardedFetch(allowed.url('/big'), { maxBytes: 1000 });
    expect(big).toMatchObject({ truncated: true });
    expect(big.body.length).toBe(1000);
    const started = Date.now();
    await expect(guardedFetch(allowed.url('/slow'), { timeoutMs: 200 })).rejects.toBeInstanceOf(FetchFailedError);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('the allowlist is exact: another port on loopback stays refused', async () => {
    expect(allowed.hostPort).not.toBe(target.hostPort);
    await expect(guardedFetch(target.url())).rejects.toBeInstanceOf(UrlNotAllowedError);
    expect(target.connections()).toBe(0);
  });

  it('judges addresses, IPv4 inside IPv6 included', () => {
    for (const a of [
      '127.0.0.1',
      '::1',
      '::',
      '::ffff:10.0.0.1',
      '::ffff:a00:1',
      '64:ff9b::a9fe:a9fe',
      '::127.0.0.1',
      '2002:7f00:1::',
      'fe80::1%eth0',
      '::ffff:0:127.0.0.1',
      '::ffff:0:a9fe:a9fe',
      '::ffff:0:93.184.216.34',
      '0:0:0:1::1',
      '4000::1',
      'e000::1',
      '192.88.99.1',
      'nonsense',
    ])
      expect(isBlockedAddress(a), a).toBe(true);
    for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34', '64:ff9b::5db8:d822'])
      expect(isBlockedAddress(a), a).toBe(false);
  });

  it('the configuration refuses a loopback allowlist in AWS', () => {
    const saved = process.env.STAGE;
    try {
      expect(() => reloadConfig({ STAGE: 'aws', FETCH_ALLOWED_LOOPBACK: '127.0.0.1:8080' })).toThrow(ConfigError);
      expect(() => reloadConfig({ STAGE: 'test', FETCH_ALLOWED_LOOPBACK: '10.0.0.1:80' })).toThrow(ConfigError);
    } finally {
      reloadConfig({ STAGE: saved, FETCH_ALLOWED_LOOPBACK: allowed.hostPort });
    }
  });
});
