import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One delivery as the listener judged it. */
export interface ReceivedWebhook {
  type: string;
  id: string;
}

/**
 * The smoke test's own webhook receiver, on loopback: it answers every POST at once, then checks
 * the Standard Webhooks signature with the endpoint's secret once that is known (it is shown only
 * when the endpoint is registered, after the listener must already have an address).
 */
export class WebhookListener {
  private readonly server = http.createServer((req, res) => this.receive(req, res));
  private secret: string | undefined;
  private readonly bodies: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  private waiter: (() => void) | undefined;

  static async start(port: number): Promise<WebhookListener> {
    const listener = new WebhookListener();
    await new Promise<void>((resolve, reject) => {
      listener.server.once('error', reject);
      listener.server.listen(port, '127.0.0.1', () => resolve());
    });
    return listener;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/smoke-webhook`;
  }

  useSecret(secret: string): void {
    this.secret = secret;
  }

  private receive(req: http.IncomingMessage, res: http.ServerResponse) {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      this.bodies.push({ headers: req.headers, body });
      res.writeHead(204).end();
      this.waiter?.();
    });
  }

  /** The first delivery whose signature verifies; a delivery that does not verify fails the step. */
  async firstVerified(signal: AbortSignal): Promise<ReceivedWebhook> {
    for (;;) {
      const next = this.bodies.shift();
      if (next) return this.verify(next);
      if (signal.aborted) throw new Error('no webhook reached the listener in time');
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiter = undefined;
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.waiter = wake;
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  private verify({ headers, body }: { headers: http.IncomingHttpHeaders; body: string }): ReceivedWebhook {
    if (!this.secret) throw new Error('a webhook arrived before its endpoint was registered');
    const header = (name: string) => String(headers[name] ?? '');
    let payload: { type?: unknown };
    try {
      payload = new Webhook(this.secret).verify(body, {
        'webhook-id': header('webhook-id'),
        'webhook-timestamp': header('webhook-timestamp'),
        'webhook-signature': header('webhook-signature'),
      }) as { type?: unknown };
    } catch (err) {
      throw new Error(`a webhook arrived with a signature that does not verify: ${(err as Error).message}`);
    }
    return { type: String(payload.type), id: header('webhook-id') };
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
