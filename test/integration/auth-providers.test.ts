import { afterEach, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { call, uniqueIp } from '../helpers/api';

/** `GET /api/auth/providers`: the sign-in page's list of OAuth buttons, read from configuration only. */
const CODEHOST = { OAUTH_CODEHOST_CLIENT_ID: 'codehost-client', OAUTH_CODEHOST_CLIENT_SECRET: 'codehost-secret' };
const WEBID = { OAUTH_WEBID_CLIENT_ID: 'webid-client', OAUTH_WEBID_CLIENT_SECRET: 'webid-secret' };
const unset = (env: Record<string, string>) => Object.fromEntries(Object.keys(env).map((k) => [k, undefined]));

const providers = () => call('GET', '/api/auth/providers', { ip: uniqueIp() });

describe('GET /api/auth/providers', () => {
  afterEach(() => reloadConfig({ ...unset(CODEHOST), ...unset(WEBID) }));

  it('lists no provider when none is configured, publicly and cacheably, without a session', async () => {
    reloadConfig({ ...unset(CODEHOST), ...unset(WEBID) });
    const res = await providers();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ oauthProviders: [] });
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.cookies).toEqual([]);
  });

  it('lists each configured provider, and matches what its start route does', async () => {
    reloadConfig(CODEHOST);
    expect((await providers()).body).toEqual({ oauthProviders: ['codehost'] });
    expect((await call('GET', '/api/auth/oauth-codehost', { ip: uniqueIp() })).status).toBe(302);
    expect((await call('GET', '/api/auth/oauth-webid', { ip: uniqueIp() })).status).toBe(503);

    reloadConfig({ ...CODEHOST, ...WEBID });
    expect((await providers()).body).toEqual({ oauthProviders: ['codehost', 'webid'] });
  });

  it('a provider with a client id but no secret is not configured', async () => {
    reloadConfig({ OAUTH_WEBID_CLIENT_ID: 'webid-client' });
    expect((await providers()).body).toEqual({ oauthProviders: [] });
  });
});
