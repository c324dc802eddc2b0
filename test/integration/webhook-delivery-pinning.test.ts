import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { postSigned } from '#functions/workers/webhook-delivery/deliver';
import { startCountingServer } from '../helpers/counting-server';

/**
 * DNS rebinding against account webhook deliveries: the platform's resolver (node:dns/promises, what
 * every check asks) answers a public address for `localhost`, while a connection that resolved the
 * name again would get the system's answer, loopback. Pinned to the vetted address, a delivery
 * never reaches the loopback listener.
 */
const PUBLIC_ANSWER = '93.184.216.34';
vi.mock('node:dns/promises', async (original) => {
  const real = await original<typeof import('node:dns/promises')>();
  const lookup = (async (host: string, opts?: unknown) =>
    host === 'localhost' ? [{ address: PUBLIC_ANSWER, family: 4 }] : real.lookup(host, opts as never)) as typeof real.lookup;
  return { ...real, default: { ...real, lookup }, lookup };
});

describe('account webhook deliveries are pinned to the vetted address', () => {
  let listener: Awaited<ReturnType<typeof startCountingServer>>;
  beforeAll(async () => {
    listener = await startCountingServer((_req, res) => res.end('ok'));
  });
  afterAll(() => listener.close());

  it('a name answering a public address for the check and loopback for the connection reaches no loopback listener', async () => {
    const signer = new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`);
    const event = { id: 'evt_rebind', type: 'instance.stopped' as const, timestamp: new Date().toISOString(), data: { userId: 'u_rebind' } };
    for (const scheme of ['http', 'https']) {
      const url = `${scheme}://localhost:${listener.port}/hook`;
      // The public answer is not reachable from here: the attempt fails, and nothing else is tried.
      await expect(postSigned(url, event, signer), url).rejects.toThrow();
    }
    expect(listener.connections()).toBe(0);
  });
});
