import { randomBytes } from 'node:crypto';
import { createPlatformClient, type PlatformClient } from '#clients/typescript/index';
import { MAX_WAIT_SECONDS } from '#contract/instance';
import { confirmationToken } from './confirmation';
import { edgeGet, websocketExchange } from './edge';
import type { SmokeOptions } from './options';
import { type StepResult, StepRunner } from './steps';
import { WebhookListener } from './webhook-listener';

/** The paths this run calls: the deployed document must describe each. */
const PATHS_USED = [
  '/api/health',
  '/api/register',
  '/api/auth/callback/credentials',
  '/api/auth/verify-email',
  '/api/settings',
  '/api/agents/provision',
  '/api/agents/{id}',
  '/api/instance/{userId}',
  '/api/instance/{userId}/token',
  '/api/instance/{userId}/stop',
  '/api/chat',
  '/api/webhooks/endpoints',
  '/api/webhooks/endpoints/{id}',
  '/api/webhooks/endpoints/{id}/deliveries',
];

const CHAT_MESSAGE = 'This is the post-deploy smoke test: answer with one short sentence.';

/** What the run created, so cleanup removes exactly that. */
export interface Created {
  account?: { email: string; userId: string };
  agent?: { id: string; url?: string; websocketUrl?: string };
  /** True when the run started the account's instance (there was none, or it was not running). */
  instance?: boolean;
  webhookEndpoint?: { id: string; url: string };
}

export interface SmokeReport {
  verdict: 'pass' | 'fail';
  url: string;
  startedAt: string;
  durationMs: number;
  steps: StepResult[];
  created: Created;
}

interface ApiAnswer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's data when the status is one of `ok`, else an error naming the call and what it answered. */
function expect<T>(what: string, answer: ApiAnswer<T>, ok: number[] = [200]): T {
  if (ok.includes(answer.response.status)) return answer.data as T;
  const body = (answer.error ?? answer.data) as { error?: unknown; code?: unknown } | undefined;
  const said = body && typeof body === 'object' ? [body.code, body.error].filter(Boolean).join(' ') : '';
  throw new Error(`${what} answered ${answer.response.status}${said ? `: ${said}` : ''}`);
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

const sessionFrom = (res: Response) => /(?:^|,\s*)session=([^;]+)/.exec(res.headers.getSetCookie().join(', '))?.[1];

/**
 * The smoke run: checks in order, each a step, then cleanup of everything the run created, always.
 * `onStep` hears each step as it ends.
 */
export async function runSmoke(options: SmokeOptions, onStep: (r: StepResult) => void, runSignal: AbortSignal): Promise<SmokeReport> {
  const startedAt = new Date();
  const steps = new StepRunner(onStep, runSignal);
  const stepSeconds = options.stepTimeoutSeconds;
  const baseUrl = options.baseUrl;
  const anonymous = createPlatformClient({ baseUrl });
  const created: Created = {};
  let api: PlatformClient | undefined;
  let userId = '';
  let password = '';
  let listener: WebhookListener | undefined;

  const signIn = async (email: string, secret: string, signal: AbortSignal) => {
    const answer = await anonymous.POST('/api/auth/callback/credentials', { body: { email, password: secret }, signal });
    const user = expect('sign-in', answer);
    const token = sessionFrom(answer.response);
    if (!token) throw new Error('sign-in set no session cookie');
    return { token, userId: user.user.id };
  };

  try {
    await steps.check('health', stepSeconds, async (signal) => {
      const health = expect('GET /api/health', await anonymous.GET('/api/health', { signal }));
      if (health.status !== 'ok') throw new Error(`status ${String(health.status)}`);
      return { detail: `${health.health}; the database answered`, value: true };
    });

    await steps.check('OpenAPI document', stepSeconds, async (signal) => {
      const res = await fetch(`${baseUrl}/api/openapi.json`, { signal });
      if (res.status !== 200) throw new Error(`GET /api/openapi.json answered ${res.status}`);
      const doc = (await res.json()) as { openapi?: string; paths?: Record<string, unknown> };
      if (!doc.openapi?.startsWith('3.')) throw new Error('not an OpenAPI 3 document');
      const missing = PATHS_USED.filter((p) => !doc.paths?.[p]);
      if (missing.length) throw new Error(`the document lacks ${missing.join(', ')}`);
      return { detail: `OpenAPI ${doc.openapi}, ${Object.keys(doc.paths ?? {}).length} paths`, value: true };
    });

    const account = options.account;
    await steps.check(account.kind === 'sign-up' ? 'sign-up' : 'sign-in', stepSeconds, async (signal) => {
      if (account.kind === 'api-key') {
        api = createPlatformClient({ baseUrl, token: account.apiKey });
        const me = expect('GET /api/settings with the API key', await api.GET('/api/settings', { signal }));
        userId = me.id;
        return { detail: `API key of ${me.email}`, value: true };
      }
      if (account.kind === 'sign-in') {
        const session = await signIn(account.email, account.password, signal);
        api = createPlatformClient({ baseUrl, token: session.token });
        userId = session.userId;
        return { detail: `signed in as ${account.email}`, value: true };
      }
      password = `smoke-${randomBytes(18).toString('base64url')}`;
      const registered = expect('POST /api/register', await anonymous.POST('/api/register', { body: { email: account.email, password }, signal }), [201]);
      created.account = { email: account.email, userId: registered.id };
      const session = await signIn(account.email, password, signal);
      api = createPlatformClient({ baseUrl, token: session.token });
      userId = session.userId;
      return { detail: `${account.email} (${userId})`, value: true };
    });

    if (account.kind === 'sign-up' && account.confirmFrom) {
      const source = account.confirmFrom;
      await steps.check('confirm the address', stepSeconds, async (signal) => {
        const token = await confirmationToken(source, baseUrl, account.email, signal);
        expect('POST /api/auth/verify-email', await anonymous.POST('/api/auth/verify-email', { body: { token }, signal }));
        const me = expect('GET /api/settings', await api!.GET('/api/settings', { signal }));
        if (!me.emailVerified) throw new Error('the settings still show the address unconfirmed');
        return { detail: `confirmed from ${source.kind}`, value: true };
      });
    } else if (account.kind === 'sign-up') {
      steps.skip('confirm the address', 'no --confirm-from: the address stays unconfirmed (no admin rights)');
    }

    const webhook = options.webhook;
    if (webhook) {
      await steps.check('webhook endpoint', stepSeconds, async (signal) => {
        let url = webhook.url;
        if (webhook.kind === 'listener') {
          listener = await WebhookListener.start(webhook.port);
          url = webhook.url ?? listener.url;
        }
        const answer = await api!.POST('/api/webhooks/endpoints', { body: { url: url!, events: ['instance.*', 'agent.*'] }, signal });
        const { endpoint, secret } = expect('POST /api/webhooks/endpoints', answer, [201]);
        created.webhookEndpoint = { id: endpoint.id, url: endpoint.url };
        listener?.useSecret(secret);
        return { detail: `${endpoint.url} for instance.* and agent.*`, value: true };
      });
    } else {
      steps.skip('webhook endpoint', 'no --webhook-url or --webhook-listen');
    }

    await steps.check('provision to running', options.provisionTimeoutSeconds, async (signal) => {
      const before = await api!.GET('/api/instance/{userId}', { params: { path: { userId } }, signal });
      if (before.response.status !== 404) expect('GET /api/instance/{userId}', before);
      const name = `smoke-${startedAt
        .toISOString()
        .replace(/[-:.TZ]/g, '')
        .slice(0, 14)}`;
      const answer = await api!.POST('/api/agents/provision', { body: { name }, signal });
      if (answer.response.status === 402) {
        const hint =
          'the account needs a plan: list the --sign-up address in adminEmails and confirm it (--confirm-from), or use the --api-key of a subscriber';
        throw new Error(`${(answer.error as { code?: string } | undefined)?.code ?? 'payment required'}: ${hint}`);
      }
      const provisioned = expect('POST /api/agents/provision', answer, [201]);
      created.agent = { id: provisioned.agent.id };
      // The run started the instance when there was none or it was not running: then cleanup stops it again.
      created.instance = before.response.status === 404 || !['running', 'provisioning'].includes(before.data?.status ?? '');
      for (;;) {
        const agent = expect('GET /api/agents/{id}', await api!.GET('/api/agents/{id}', { params: { path: { id: created.agent.id } }, signal })).agent;
        if (agent.status === 'running' || agent.status === 'active') {
          created.agent.websocketUrl = agent.websocketUrl;
          break;
        }
        if (agent.status === 'error') {
          const instance = await api!.GET('/api/instance/{userId}', { params: { path: { userId } }, signal });
          throw new Error(`the agent is in error${instance.data?.failureReason ? `: ${instance.data.failureReason}` : ''}`);
        }
        const wait = Math.min(MAX_WAIT_SECONDS, Math.max(1, Math.floor(options.provisionTimeoutSeconds / 2)));
        const waited = await api!.GET('/api/instance/{userId}', { params: { path: { userId }, query: { waitFor: 'running', timeout: wait } }, signal });
        if (waited.response.status !== 404) expect('GET /api/instance/{userId}?waitFor=running', waited);
        if (waited.response.status === 404) await sleep(500, signal);
      }
      const instance = expect('GET /api/instance/{userId}', await api!.GET('/api/instance/{userId}', { params: { path: { userId } }, signal }));
      created.agent.url = instance.url;
      return { detail: `${created.agent.id} running, ${instance.runtimeVersion}`, value: true };
    });

    await steps.check('chat', stepSeconds, async (signal) => {
      const answer = await api!.POST('/api/chat', { body: { agentId: created.agent!.id, message: CHAT_MESSAGE }, signal });
      // 200 only: a 202 (the agent waking) is no answer, and an agent just seen running has no reason to sleep.
      const { reply } = expect('POST /api/chat', answer) as { reply?: { content?: unknown } };
      if (typeof reply?.content !== 'string' || reply.content.trim() === '') throw new Error('the agent answered an empty reply');
      return { detail: `answered: ${clip(reply.content)}`, value: true };
    });

    const gatewayToken = await steps.check('agent URL through the edge', stepSeconds, async (signal) => {
      const { token } = expect('GET /api/instance/{userId}/token', await api!.GET('/api/instance/{userId}/token', { params: { path: { userId } }, signal }));
      const url = created.agent!.url!;
      const refused = await edgeGet(`${url}/health`, {}, signal);
      if (refused.status !== 401) throw new Error(`without the gateway token the edge answered ${refused.status}, not 401`);
      const health = await edgeGet(`${url}/health`, { authorization: `Bearer ${token}` }, signal);
      const body = health.body as { status?: string; runtimeVersion?: string };
      if (health.status !== 200 || body?.status !== 'ok') throw new Error(`${url}/health answered ${health.status}`);
      return { detail: `${url}: the runtime answered (${body.runtimeVersion ?? 'no version'}); 401 without the token`, value: token };
    });

    await steps.check('websocket through the edge', stepSeconds, async (signal) => {
      const url = created.agent!.websocketUrl!;
      const { reply } = await websocketExchange(url, gatewayToken!, CHAT_MESSAGE, signal);
      return { detail: `${url}: answered ${clip(reply)}`, value: true };
    });

    if (webhook) {
      await steps.check('signed webhook delivered', stepSeconds, async (signal) => {
        if (listener) {
          const received = await listener.firstVerified(signal);
          return { detail: `${received.type} (${received.id}), signature verified`, value: true };
        }
        // An outside receiver: the delivery log says what it answered.
        for (;;) {
          const log = expect(
            'GET /api/webhooks/endpoints/{id}/deliveries',
            await api!.GET('/api/webhooks/endpoints/{id}/deliveries', { params: { path: { id: created.webhookEndpoint!.id }, query: { limit: 50 } }, signal }),
          );
          const delivered = log.deliveries.find((d) => d.outcome === 'delivered');
          if (delivered) return { detail: `${delivered.type} answered ${delivered.statusCode ?? '2xx'} at ${created.webhookEndpoint!.url}`, value: true };
          if (signal.aborted) {
            const failed = log.deliveries.find((d) => d.outcome === 'failed');
            throw new Error(failed ? `the receiver failed: ${failed.statusCode ?? ''} ${failed.error ?? ''}`.trim() : 'no delivery yet');
          }
          await sleep(1000, signal);
        }
      });
    } else {
      steps.skip('signed webhook delivered', 'no --webhook-url or --webhook-listen');
    }
  } finally {
    await cleanUp(steps, stepSeconds, api, anonymous, userId, password, created);
    await listener?.close();
  }

  return {
    verdict: steps.failed ? 'fail' : 'pass',
    url: baseUrl,
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - startedAt.getTime(),
    steps: steps.results,
    created,
  };
}

const clip = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);

/** Removes what the run created, newest first, each removal checked; what the run did not create stays. */
async function cleanUp(
  steps: StepRunner,
  stepSeconds: number,
  api: PlatformClient | undefined,
  anonymous: PlatformClient,
  userId: string,
  password: string,
  created: Created,
) {
  if (!api) return;
  const endpoint = created.webhookEndpoint;
  if (endpoint) {
    await steps.cleanup('delete the webhook endpoint', stepSeconds, async (signal) => {
      expect('DELETE /api/webhooks/endpoints/{id}', await api.DELETE('/api/webhooks/endpoints/{id}', { params: { path: { id: endpoint.id } }, signal }));
      const left = expect('GET /api/webhooks/endpoints', await api.GET('/api/webhooks/endpoints', { signal }));
      if (left.endpoints.some((e) => e.id === endpoint.id)) throw new Error('the endpoint is still listed');
      return { detail: endpoint.id, value: true };
    });
  }
  const agent = created.agent;
  if (agent) {
    await steps.cleanup('delete the agent', stepSeconds, async (signal) => {
      expect('DELETE /api/agents/{id}', await api.DELETE('/api/agents/{id}', { params: { path: { id: agent.id } }, signal }));
      const gone = await api.GET('/api/agents/{id}', { params: { path: { id: agent.id } }, signal });
      if (gone.response.status !== 404) throw new Error(`the agent still answers ${gone.response.status}`);
      return { detail: agent.id, value: true };
    });
  }
  if (created.instance) {
    await steps.cleanup('stop the instance', stepSeconds, async (signal) => {
      expect('POST /api/instance/{userId}/stop', await api.POST('/api/instance/{userId}/stop', { params: { path: { userId } }, signal }));
      return { detail: 'this run started it', value: true };
    });
  }
  const account = created.account;
  if (account) {
    await steps.cleanup('delete the account', stepSeconds, async (signal) => {
      const answer = await api.DELETE('/api/settings', { body: { password }, signal });
      expect('DELETE /api/settings', answer, [200, 202]);
      // A deletion the worker finishes (202) is done when the password no longer signs in.
      for (;;) {
        const signIn = await anonymous.POST('/api/auth/callback/credentials', { body: { email: account.email, password }, signal });
        if (signIn.response.status === 401) return { detail: `${account.email} no longer signs in`, value: true };
        if (signIn.response.status !== 200) expect('sign-in after the deletion', signIn);
        await sleep(1000, signal);
        if (signal.aborted) throw new Error('the account still signs in');
      }
    });
  }
}
