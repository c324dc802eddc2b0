import type { AddressInfo } from 'node:net';
import { createRuntime, type LogFields } from './app';
import { platformClient } from './platform';
import { BUILT_IN_VERSION } from './version';

/**
 * Entry of the reference agent runtime (the local launcher runs it with tsx; a container image
 * runs it with node). Settings come from the environment the launcher sets:
 *   GATEWAY_TOKEN (or GATEWAY_TOKEN_KMS_CIPHERTEXT in AWS), PLATFORM_URL, INSTANCE_USER_ID,
 *   RUNTIME_VERSION, PORT (0 = any free port), HOST.
 * Prints `listening <port>` on stdout once it accepts connections.
 */

/** One JSON line per event on stderr: the launcher (locally) or awslogs (in AWS) hands it to the per-agent log. */
const log = (message: string, { level = 'INFO', ...extra }: LogFields = {}) =>
  process.stderr.write(`${JSON.stringify({ level, service: 'agent-runtime', message, ...extra, timestamp: new Date().toISOString() })}\n`);

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`agent runtime: ${name} is not set\n`);
    process.exit(2);
  }
  return value;
}

/** In AWS the token arrives KMS-encrypted for this user; the task role may decrypt only that purpose. */
async function gatewayToken(userId: string): Promise<string> {
  if (process.env.GATEWAY_TOKEN) return process.env.GATEWAY_TOKEN;
  const ciphertext = required('GATEWAY_TOKEN_KMS_CIPHERTEXT');
  const { KMSClient, DecryptCommand } = await import('@aws-sdk/client-kms');
  const out = await new KMSClient({}).send(
    new DecryptCommand({ CiphertextBlob: Buffer.from(ciphertext, 'base64'), EncryptionContext: { userId, purpose: 'runtime-bootstrap' } }),
  );
  return Buffer.from(out.Plaintext!).toString('utf8');
}

async function main() {
  const userId = required('INSTANCE_USER_ID');
  const token = await gatewayToken(userId);
  const runtime = createRuntime({
    token,
    platform: platformClient({ baseUrl: required('PLATFORM_URL'), userId, token }),
    runtimeVersion: process.env.RUNTIME_VERSION || BUILT_IN_VERSION,
    log,
  });
  const port = Number(process.env.PORT ?? 8080);
  await new Promise<void>((resolve) => runtime.server.listen(port, process.env.HOST || '0.0.0.0', resolve));
  process.stdout.write(`listening ${(runtime.server.address() as AddressInfo).port}\n`);

  const stop = async () => {
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());

  try {
    await runtime.start();
    log('state loaded; ready', { runtimeVersion: process.env.RUNTIME_VERSION || BUILT_IN_VERSION });
  } catch (err) {
    log('could not load the state from the platform; exiting', { level: 'ERROR', error: (err as Error).message });
    process.exit(1);
  }
}

main().catch((err) => {
  process.stderr.write(`agent runtime failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
