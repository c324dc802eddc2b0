import net from 'node:net';
import os from 'node:os';
import { describe, expect, inject, it } from 'vitest';

/**
 * The emulators hold every table item (password hashes included) and every queued message, and
 * accept made-up credentials: they must answer on loopback only, never on the machine's network
 * addresses. The global setup starts them through local/emulators.ts, as `npm start` does.
 */

function networkAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((a): a is os.NetworkInterfaceInfo => !!a && !a.internal && !(a.family === 'IPv6' && a.address.startsWith('fe80:')))
    .map((a) => a.address);
}

/** 'connected', or the error code of the refused attempt. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 3000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('ETIMEDOUT');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

const emulators = inject('emulators');
const ports = {
  'DynamoDB Local': Number(new URL(emulators.dynamoEndpoint).port),
  'the SQS emulator': Number(new URL(emulators.sqsEndpoint).port),
};

describe('local emulators listen on loopback only', () => {
  it('this machine has a non-loopback address to try (otherwise this suite proves nothing)', () => {
    expect(networkAddresses(), 'no non-loopback network address found: the loopback-only check cannot run here').not.toEqual([]);
  });

  for (const [name, port] of Object.entries(ports)) {
    it(`${name} answers on 127.0.0.1`, async () => {
      expect(await tryConnect('127.0.0.1', port)).toBe('connected');
    });

    it(`${name} refuses connections on every non-loopback address of the machine`, async () => {
      const addresses = networkAddresses();
      expect(addresses).not.toEqual([]);
      const outcomes = await Promise.all(addresses.map(async (address) => [address, await tryConnect(address, port)] as const));
      for (const [address, outcome] of outcomes) expect(outcome, `${name} on ${address}:${port}`).not.toBe('connected');
    });
  }
});
