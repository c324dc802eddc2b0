import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/**
 * An OAuth 2 provider on loopback speaking the real wire formats, in one of two dialects:
 * - `codehost` (GitHub-like): `GET /login/oauth/authorize`, `POST /login/oauth/access_token`
 *   (client_secret_post), `GET /user` ({id, login, name}), `GET /user/emails` ([{email, primary, verified}]);
 * - `webid` (OpenID Connect): `GET /authorize`, `POST /token` (client_secret_basic, answers an RS256
 *   ID token), `GET /userinfo` ({sub, email, email_verified, name}), `GET /jwks`.
 * The token endpoint takes `application/x-www-form-urlencoded`, checks the client, the redirect URI
 * and the PKCE S256 verifier, and lets each code work once, as a real provider does.
 */
export interface FakeAccount {
  id: string;
  email: string;
  emailVerified: boolean;
  name: string;
}

export interface FakeOAuthProvider {
  dialect: 'codehost' | 'webid';
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The environment that points the platform at this provider. */
  env: Record<string, string>;
  /** What the provider's sign-in page does: approve as `account` and redirect back with a code. */
  approve(authorizeUrl: string, account: FakeAccount): Promise<{ code: string; state: string; redirect: URL }>;
  /** What it does when the user declines. */
  decline(authorizeUrl: string): Promise<URL>;
  /** Token requests received, with the form fields they sent. */
  tokenRequests: Record<string, string>[];
  close(): Promise<void>;
}

interface Grant {
  account: FakeAccount;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  used: boolean;
}

const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export async function startFakeOAuthProvider(dialect: 'codehost' | 'webid'): Promise<FakeOAuthProvider> {
  const clientId = `client-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(16).toString('hex');
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, FakeAccount>();
  const tokenRequests: Record<string, string>[] = [];
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const paths =
    dialect === 'codehost'
      ? { authorize: '/login/oauth/authorize', token: '/login/oauth/access_token', user: '/user', emails: '/user/emails' }
      : { authorize: '/authorize', token: '/token', user: '/userinfo', emails: '' };
  let issuer = '';

  function clientOf(req: IncomingMessage, form: URLSearchParams): { id?: string; secret?: string } {
    const basic = req.headers.authorization?.match(/^Basic (.+)$/i);
    if (basic) {
      const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map(decodeURIComponent);
      return { id, secret };
    }
    return { id: form.get('client_id') ?? undefined, secret: form.get('client_secret') ?? undefined };
  }

  async function token(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== 'POST' || !req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      return json(res, 400, { error: 'invalid_request' });
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    tokenRequests.push(Object.fromEntries(form));
    const client = clientOf(req, form);
    if (client.id !== clientId || client.secret !== clientSecret) return json(res, 401, { error: 'invalid_client' });
    const grant = grants.get(form.get('code') ?? '');
    if (form.get('grant_type') !== 'authorization_code' || !grant || grant.used) return json(res, 400, { error: 'invalid_grant' });
    grant.used = true;
    if (grant.redirectUri !== form.get('redirect_uri') || s256(form.get('code_verifier') ?? '') !== grant.codeChallenge) {
      return json(res, 400, { error: 'invalid_grant', error_description: 'redirect_uri or code_verifier mismatch' });
    }
    const accessToken = randomBytes(20).toString('hex');
    tokens.set(accessToken, grant.account);
    const body: Record<string, unknown> = { access_token: accessToken, token_type: dialect === 'codehost' ? 'bearer' : 'Bearer', scope: 'read' };
    if (dialect === 'webid') {
      body.expires_in = 3599;
      body.id_token = await new SignJWT({ email: grant.account.email, email_verified: grant.account.emailVerified })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(issuer)
        .setAudience(clientId)
        .setSubject(grant.account.id)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey);
    }
    json(res, 200, body);
  }

  function resource(req: IncomingMessage, res: ServerResponse, path: string) {
    const account = tokens.get(req.headers.authorization?.replace(/^Bearer /i, '') ?? '');
    if (!account) return json(res, 401, { message: 'Bad credentials' });
    if (path === paths.emails) return json(res, 200, [{ email: account.email, primary: true, verified: account.emailVerified, visibility: 'private' }]);
    if (dialect === 'codehost') return json(res, 200, { id: Number(account.id), login: `user${account.id}`, name: account.name, email: null });
    json(res, 200, { sub: account.id, email: account.email, email_verified: account.emailVerified, name: account.name });
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === paths.token) return void token(req, res);
    if (path === paths.user || (paths.emails && path === paths.emails)) return resource(req, res, path);
    if (path === '/jwks') return json(res, 200, { keys: [jwk] });
    json(res, 404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** The provider's sign-in page, reduced to its decision: checks the request as a provider would. */
  function authorizeRequest(authorizeUrl: string) {
    const url = new URL(authorizeUrl);
    if (`${url.origin}${url.pathname}` !== `${issuer}${paths.authorize}`) throw new Error(`not this provider's authorize URL: ${authorizeUrl}`);
    const q = url.searchParams;
    if (q.get('client_id') !== clientId || q.get('response_type') !== 'code') throw new Error('bad authorization request');
    if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge') || !q.get('state')) throw new Error('PKCE S256 and state are required');
    return { redirectUri: q.get('redirect_uri')!, state: q.get('state')!, codeChallenge: q.get('code_challenge')! };
  }

  const prefix = dialect === 'codehost' ? 'OAUTH_CODEHOST' : 'OAUTH_WEBID';
  return {
    dialect,
    issuer,
    clientId,
    clientSecret,
    env: {
      [`${prefix}_CLIENT_ID`]: clientId,
      [`${prefix}_CLIENT_SECRET`]: clientSecret,
      [`${prefix}_AUTHORIZE_URL`]: `${issuer}${paths.authorize}`,
      [`${prefix}_TOKEN_URL`]: `${issuer}${paths.token}`,
      [`${prefix}_USERINFO_URL`]: `${issuer}${paths.user}`,
      ...(dialect === 'codehost' ? { OAUTH_CODEHOST_EMAILS_URL: `${issuer}${paths.emails}` } : { OAUTH_WEBID_ISSUER: issuer }),
    },
    tokenRequests,
    async approve(authorizeUrl, account) {
      const { redirectUri, state, codeChallenge } = authorizeRequest(authorizeUrl);
      const code = randomBytes(12).toString('hex');
      grants.set(code, { account, clientId, redirectUri, codeChallenge, used: false });
      const redirect = new URL(redirectUri);
      redirect.searchParams.set('code', code);
      redirect.searchParams.set('state', state);
      return { code, state, redirect };
    },
    async decline(authorizeUrl) {
      const { redirectUri, state } = authorizeRequest(authorizeUrl);
      const redirect = new URL(redirectUri);
      redirect.searchParams.set('error', 'access_denied');
      redirect.searchParams.set('state', state);
      return redirect;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
