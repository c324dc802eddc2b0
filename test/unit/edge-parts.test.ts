import { createHash } from 'node:crypto';
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { requestHeadersFor, withoutHopByHop } from '#edge/forwarding';
import { routeCache, tokenMatches, type Route } from '#edge/routes';
import { subdomainOf } from '#edge/server';
import { presentedToken, targetWithoutToken } from '#edge/tokens';
import { presentedToken as runtimePresentedToken } from '../../runtime/auth';

const url = (target: string) => new URL(target, 'http://edge.invalid');

describe('the edge reads the gateway token as the runtime does', () => {
  const cases: [http.IncomingHttpHeaders, string, string | null][] = [
    [{ authorization: 'Bearer gw_header' }, '/x', 'gw_header'],
    [{ authorization: 'bearer   gw_header ' }, '/x', 'gw_header'],
    [{ 'sec-websocket-protocol': 'agent-runtime, bearer.gw_proto' }, '/agents/a', 'gw_proto'],
    [{}, '/agents/a?token=gw_query', 'gw_query'],
    [{ authorization: 'Bearer gw_header', 'sec-websocket-protocol': 'agent-runtime, bearer.gw_proto' }, '/x?token=gw_query', 'gw_header'],
    [{ 'sec-websocket-protocol': 'agent-runtime, bearer.gw_proto' }, '/x?token=gw_query', 'gw_proto'],
    [{ authorization: 'Basic abc' }, '/x', null],
    [{}, '/x', null],
  ];
  it.each(cases)('%j %s → %s', (headers, target, expected) => {
    expect(presentedToken(headers, url(target))).toBe(expected);
    expect(runtimePresentedToken({ headers } as http.IncomingMessage, url(target))).toBe(expected);
  });

  it('forwards and logs the target without the token, keeping the rest of the query', () => {
    expect(targetWithoutToken(url('/agents/a?token=gw_secret&x=1'))).toBe('/agents/a?x=1');
    expect(targetWithoutToken(url('/health?token=gw_secret'))).toBe('/health');
    expect(targetWithoutToken(url('/health?x=1'))).toBe('/health?x=1');
  });
});

describe('the headers the edge forwards', () => {
  const incoming: http.IncomingHttpHeaders = {
    host: 'agent-1.agents.example.com',
    connection: 'keep-alive, x-secret-hop',
    'keep-alive': 'timeout=5',
    'x-secret-hop': 'dropped',
    te: 'trailers',
    upgrade: 'h2c',
    'proxy-authorization': 'Basic abc',
    'x-forwarded-for': '203.0.113.9',
    'x-forwarded-host': 'evil.example',
    forwarded: 'for=1.2.3.4;host=evil.example',
    'x-forwarded-proto': 'https',
    authorization: 'Bearer gw_from_query_or_header',
    'sec-websocket-protocol': 'agent-runtime, bearer.gw_x',
    'content-type': 'application/json',
    accept: 'text/event-stream',
  };
  const from = { clientAddress: '::ffff:198.51.100.7', proto: 'http' as const, token: 'gw_checked', targetHost: '10.0.1.5:8080' };

  it('drops hop-by-hop headers and what the client claims, and sets Host, X-Forwarded-For/-Proto and the token', () => {
    expect(requestHeadersFor(incoming, from)).toEqual({
      'content-type': 'application/json',
      accept: 'text/event-stream',
      host: '10.0.1.5:8080',
      'x-forwarded-for': '198.51.100.7',
      'x-forwarded-proto': 'http',
      authorization: 'Bearer gw_checked',
    });
  });

  it('behind the load balancer keeps the chain it wrote and appends the peer', () => {
    const out = requestHeadersFor(incoming, { ...from, proto: 'https', trustedForwardedFor: '203.0.113.9' });
    expect(out).toMatchObject({ 'x-forwarded-for': '203.0.113.9, 198.51.100.7', 'x-forwarded-proto': 'https' });
  });

  it('drops hop-by-hop headers of the answer', () => {
    expect(withoutHopByHop({ connection: 'close, x-hop', 'x-hop': '1', 'transfer-encoding': 'chunked', 'content-type': 'text/event-stream' })).toEqual({
      'content-type': 'text/event-stream',
    });
  });
});

describe('routing', () => {
  it('takes the one label before the agent domain from Host, and nothing else', () => {
    expect(subdomainOf('agent-0123456789abcdef.agents.localhost:3000', 'agents.localhost')).toBe('agent-0123456789abcdef');
    expect(subdomainOf('AGENT-1.Agents.Example.com.', 'agents.example.com')).toBe('agent-1');
    expect(subdomainOf('a.b.agents.example.com', 'agents.example.com')).toBeUndefined();
    expect(subdomainOf('agents.example.com', 'agents.example.com')).toBeUndefined();
    expect(subdomainOf('agent-1.agents.example.com.evil.test', 'agents.example.com')).toBeUndefined();
    expect(subdomainOf('127.0.0.1:9', 'agents.example.com')).toBeUndefined();
    expect(subdomainOf(undefined, 'agents.example.com')).toBeUndefined();
  });

  const route = (endpoint: string): Route => ({ userId: 'u1', status: 'running', generation: 1, endpoint, connectionCap: 10 });

  it('keeps an answer for its bound, reads once however many ask, and reads again once invalidated', async () => {
    let clock = 0;
    const reads: string[] = [];
    let endpoint = 'http://127.0.0.1:1001';
    const cache = routeCache({
      ttlMs: 1000,
      now: () => clock,
      load: async (sub) => {
        reads.push(sub);
        return route(endpoint);
      },
    });
    const together = await Promise.all([cache.get('a'), cache.get('a'), cache.get('a')]);
    expect(together.map((r) => r?.endpoint)).toEqual(Array(3).fill('http://127.0.0.1:1001'));
    expect(reads).toEqual(['a']);
    endpoint = 'http://127.0.0.1:1002';
    clock = 999;
    expect((await cache.get('a'))?.endpoint).toBe('http://127.0.0.1:1001');
    clock = 1000;
    expect((await cache.get('a'))?.endpoint).toBe('http://127.0.0.1:1002');
    endpoint = 'http://127.0.0.1:1003';
    cache.invalidate('a');
    expect((await cache.get('a'))?.endpoint).toBe('http://127.0.0.1:1003');
    expect(reads).toEqual(['a', 'a', 'a']);
  });

  it('keeps a miss too, and no more than its bound of subdomains', async () => {
    let reads = 0;
    const cache = routeCache({
      ttlMs: 60_000,
      maxEntries: 2,
      load: async () => {
        reads++;
        return undefined;
      },
    });
    await cache.get('nope');
    await cache.get('nope');
    expect(reads).toBe(1);
    await cache.get('b');
    await cache.get('c');
    expect(cache.size).toBe(2);
  });

  it('matches only the token whose hash the route holds', () => {
    const hash = '3d4e2a1f2e6b1f6f0e8b8c1b55d52b1f35d1c8b8b1d1f5d0c7c3e1c5b0c9f3a1';
    expect(tokenMatches({ tokenHash: undefined }, 'gw_any')).toBe(false);
    expect(tokenMatches({ tokenHash: hash }, 'gw_any')).toBe(false);
    const sha = createHash('sha256').update('gw_right').digest('hex');
    expect(tokenMatches({ tokenHash: sha }, 'gw_right')).toBe(true);
    expect(tokenMatches({ tokenHash: sha }, 'gw_wrong')).toBe(false);
  });
});
