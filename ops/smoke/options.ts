import { parseArgs } from 'node:util';

/** Where the smoke test takes the confirmation link of the address it signed up with. */
export type ConfirmationSource = { kind: 'local-mail' } | { kind: 'outbox'; dir: string } | { kind: 'prompt' };

/** Who the smoke test acts as: an account it creates (and deletes), or one the operator already has. */
export type SmokeAccount =
  | { kind: 'sign-up'; email: string; confirmFrom?: ConfirmationSource }
  | { kind: 'api-key'; apiKey: string }
  | { kind: 'sign-in'; email: string; password: string };

/** The receiver of the test webhook: the smoke test's own listener on loopback, or one the operator runs. */
export type WebhookReceiver = { kind: 'listener'; port: number; url?: string } | { kind: 'external'; url: string };

export interface SmokeOptions {
  baseUrl: string;
  account: SmokeAccount;
  /** Seconds the new agent may take to reach `running`. */
  provisionTimeoutSeconds: number;
  /** Seconds every other step may take. */
  stepTimeoutSeconds: number;
  webhook?: WebhookReceiver;
  json: boolean;
}

export const USAGE = `npm run smoke -- --url <base> [options]

A post-deploy check of a running platform: health (with the database probe), the OpenAPI
document, an account, a provision that reaches running, a chat, the agent's URL and websocket
through the edge, a signed test webhook; then it removes what it created, also after a failure.
One line per step with its time, then the verdict; exit 0 when every step passed, 1 otherwise,
2 for a usage error.

  --url <base>              the platform's origin, e.g. https://app.example.com (required)

The account (one of):
  --sign-up                 create a throwaway account and delete it at the end; provisioning
                            needs an admin, so list the address in adminEmails and confirm it
  --email <address>         with --sign-up: the address (default smoke-<random>@example.com);
                            without: an existing account, with --password
  --password <password>     the existing account's password
  --confirm-from <source>   with --sign-up, where the confirmation link is read:
                              local-mail     the local stack's mail viewer (/_local/mail.json)
                              outbox:<dir>   a local stack's outbox folder (<DATA_DIR>/outbox)
                              prompt         paste the link from the mailbox on stdin
                            (omitted: the address stays unconfirmed)
  --api-key <sk_...>        an existing account's API key (a subscriber or an admin)

What it checks:
  --timeout <seconds>       how long the agent may take to reach running (default 120)
  --step-timeout <seconds>  how long any other step may take (default 30)
  --webhook-url <url>       register this receiver for the agent's lifecycle events and check a
                            signed delivery reached it (the delivery log says 2xx); \`local\` runs
                            the smoke test's own listener on loopback and verifies the signature
  --webhook-listen <port>   run the listener on this loopback port (behind a tunnel, say), with
                            --webhook-url the public address that reaches it
                            (neither: the webhook step is skipped)

Output:
  --json                    one JSON report on stdout instead of the lines
  --help                    this text
`;

export class UsageError extends Error {}

const seconds = (raw: string | undefined, name: string, fallback: number) => {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a whole number of seconds, at least 1`);
  return n;
};

function confirmationSource(raw: string): ConfirmationSource {
  if (raw === 'local-mail' || raw === 'prompt') return { kind: raw };
  if (raw.startsWith('outbox:') && raw.length > 'outbox:'.length) return { kind: 'outbox', dir: raw.slice('outbox:'.length) };
  throw new UsageError('--confirm-from must be local-mail, outbox:<dir> or prompt');
}

function webhookReceiver(url: string | undefined, listen: string | undefined): WebhookReceiver | undefined {
  if (listen !== undefined) {
    const port = Number(listen);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError('--webhook-listen must be a port number');
    return { kind: 'listener', port, ...(url && url !== 'local' ? { url: httpUrl(url, '--webhook-url') } : {}) };
  }
  if (url === undefined) return undefined;
  if (url === 'local') return { kind: 'listener', port: 0 };
  return { kind: 'external', url: httpUrl(url, '--webhook-url') };
}

function httpUrl(raw: string, name: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${name} must be an http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${name} must be an http(s) URL`);
  return raw;
}

/** The options, or `'help'`; throws UsageError with a sentence for the operator. */
export function parseSmokeArgs(argv: string[], randomSuffix: () => string): SmokeOptions | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      options: {
        url: { type: 'string' },
        'sign-up': { type: 'boolean' },
        email: { type: 'string' },
        password: { type: 'string' },
        'confirm-from': { type: 'string' },
        'api-key': { type: 'string' },
        timeout: { type: 'string' },
        'step-timeout': { type: 'string' },
        'webhook-url': { type: 'string' },
        'webhook-listen': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return 'help';
  const str = (name: string) => values[name] as string | undefined;
  const url = str('url');
  if (!url) throw new UsageError('--url <base> is required');
  const baseUrl = httpUrl(url, '--url').replace(/\/+$/, '');

  const chosen = [values['sign-up'] && '--sign-up', str('api-key') && '--api-key', str('password') && '--password'].filter(Boolean);
  if (chosen.length > 1) throw new UsageError(`choose one account: ${chosen.join(' or ')}`);
  if (str('confirm-from') && !values['sign-up']) throw new UsageError('--confirm-from goes with --sign-up');
  let account: SmokeAccount;
  if (values['sign-up']) {
    const confirm = str('confirm-from');
    account = {
      kind: 'sign-up',
      email: str('email') ?? `smoke-${randomSuffix()}@example.com`,
      ...(confirm ? { confirmFrom: confirmationSource(confirm) } : {}),
    };
  } else if (str('api-key')) {
    if (str('email')) throw new UsageError('--email goes with --sign-up or --password, not --api-key');
    account = { kind: 'api-key', apiKey: str('api-key')! };
  } else if (str('password')) {
    if (!str('email')) throw new UsageError('--password needs --email');
    account = { kind: 'sign-in', email: str('email')!, password: str('password')! };
  } else {
    throw new UsageError('choose an account: --sign-up, --api-key <sk_...>, or --email and --password');
  }

  return {
    baseUrl,
    account,
    provisionTimeoutSeconds: seconds(str('timeout'), 'timeout', 120),
    stepTimeoutSeconds: seconds(str('step-timeout'), 'step-timeout', 30),
    webhook: webhookReceiver(str('webhook-url'), str('webhook-listen')),
    json: values.json === true,
  };
}
