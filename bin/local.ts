/**
 * `npm start`: the whole platform on one machine with no AWS account. DynamoDB Local and the SQS
 * emulator start on loopback, the table and queues are created, and every contract route is
 * served on http://127.0.0.1:$PORT through the same Lambda handlers that run in AWS.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ConfigError, localSettings, reloadConfig, cardConfig, emailConfig, instanceConfig } from '#platform/config';
import { LOCAL_MAIL_PAGE } from '#contract/console';
import { createEdge } from '#edge/server';
import { resetQueueClient } from '#adapters/queue';
import { resetDbClient } from '#data/client';
import { logger } from '#http/logger';
import { ensureConsoleBuilt } from '#build/web-console';
import { LOCAL_SQS_ENDPOINT_FILE } from '#local/dead-letters';
import { loadGroupHandler } from '#local/handlers';
import { startEmulators } from '#local/emulators';
import { localModelSettings } from '#local/model-server';
import { matchPage } from '#local/pages';
import { createLocalServer } from '#local/server';
import { startLocalWorkers } from '#local/workers';
import { superviseLocalChildren } from '#local/supervision';

const progress = (msg: string) => process.stderr.write(`[local] ${msg}\n`);

/** A secret the operator did not set is generated once into the data folder, so it survives restarts. */
function ensureSecret(dataDir: string, envName: string, fileName: string, prefix = ''): string {
  const fromEnv = process.env[envName];
  if (fromEnv !== undefined) return fromEnv;
  const file = path.join(dataDir, fileName);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = prefix + randomBytes(48).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  progress(`generated ${envName} into ${file}`);
  return secret;
}

async function main() {
  const settings = localSettings();
  const dataDir = path.resolve(settings.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  // Before anything is spawned: reaps what a crash left, and no child outlives this process.
  const supervision = superviseLocalChildren(dataDir, progress);
  const jwtSecret = ensureSecret(dataDir, 'JWT_SECRET', 'jwt-secret');
  // Validate every setting before starting anything (a short JWT_SECRET refuses to start): reloadConfig
  // runs validateAllSettings, since in AWS a section is parsed only on its first read.
  reloadConfig({ JWT_SECRET: jwtSecret, STAGE: 'local' });

  // The web console served at `/`: built on the first start and whenever web/ changed (esbuild, well under a second).
  if (ensureConsoleBuilt()) progress('built the web console (web/dist)');

  // Looked for while the emulators start: a model server on loopback, else the built-in local model.
  const localModel = localModelSettings();

  progress('starting DynamoDB Local and the SQS emulator…');
  const emulators = await startEmulators({
    dataDir: path.join(dataDir, 'dynamodb'),
    queueDataDir: path.join(dataDir, 'queues'),
    tableName: process.env.TABLE_NAME ?? 'agent-platform',
    dynamoPort: settings.DYNAMODB_LOCAL_PORT,
    maxHeapMb: settings.DYNAMODB_LOCAL_MAX_HEAP_MB,
  });
  progress(`DynamoDB Local at ${emulators.dynamoEndpoint}, SQS at ${emulators.sqsEndpoint}`);
  writeFileSync(path.join(dataDir, LOCAL_SQS_ENDPOINT_FILE), `${emulators.sqsEndpoint}\n`);

  // The agent edge on the same port: http://<subdomain>.<AGENT_DOMAIN>:<port> reaches the agent (browsers and curl resolve *.localhost to loopback).
  const edge = createEdge({ agentDomain: instanceConfig().agentDomain, behindLoadBalancer: false });
  const server = createLocalServer(loadGroupHandler, (err) => logger().error('local server failure', err as Error), matchPage, edge);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(settings.PORT, settings.HOST, () => resolve());
    });
  } catch (err) {
    // Never leave DynamoDB Local (a Java process) behind when the port is taken.
    await emulators.stop();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new ConfigError(`port ${settings.PORT} is in use: stop the other server or set PORT`);
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const model = await localModel;
  if (model.report) progress(model.report);
  const baseUrl = `http://${settings.HOST}:${port}`;

  reloadConfig({
    STAGE: 'local',
    JWT_SECRET: jwtSecret,
    DYNAMODB_ENDPOINT: emulators.dynamoEndpoint,
    SQS_ENDPOINT: emulators.sqsEndpoint,
    PROVISIONING_QUEUE_URL: emulators.queueUrls.provisioning,
    EVENTS_QUEUE_URL: emulators.queueUrls.events,
    APP_URL: process.env.APP_URL ?? baseUrl,
    PROVISIONING_DLQ_URL: emulators.dlqUrls.provisioning,
    // Plain http on loopback: browsers and curl would drop a Secure cookie here.
    COOKIE_SECURE: process.env.COOKIE_SECURE ?? 'false',
    // The agent URLs the API hands out are the edge's on this port.
    LOCAL_EDGE_PORT: String(port),
    // The model server found at start, handed to the model layer as settings.
    ...model.settings,
    // The local card page signs its webhook with this secret, and the webhook verifies with it.
    ...(cardConfig().mode === 'local' ? { CARD_WEBHOOK_SECRET: ensureSecret(dataDir, 'CARD_WEBHOOK_SECRET', 'card-webhook-secret', 'whsec_') } : {}),
  });
  if (cardConfig().mode === 'local') progress(`local card mode: checkouts complete on ${baseUrl}/local-card/checkout/… with no payment`);
  resetDbClient();
  resetQueueClient();

  const workers = await startLocalWorkers(emulators);
  if (workers.reconciled.relaunched) progress(`relaunching ${workers.reconciled.relaunched} instance(s) that were running before the last stop…`);

  let stopping = false;
  const stop = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    supervision.stopping();
    progress(`${signal}: stopping…`);
    // Websocket clients are told 1012 (service restart) so they reconnect once the stack is back.
    await edge.close();
    await workers.stop();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await emulators.stop();
    progress('stopped');
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // Exit rather than restart the database: see the README's "What a local crash can lose".
  supervision.onDatabaseDeath((why) => void stop(`${why}; the stack cannot work without it, so it stops. Start it again with npm start`, 1));

  progress(`console: open ${baseUrl} and sign up`);
  if (emailConfig().outboxPage) progress(`mail: nothing is sent; the confirmation link and every other mail are on ${baseUrl}${LOCAL_MAIL_PAGE}`);
  process.stdout.write(`ready: ${baseUrl}\n`);
}

main().catch((err) => {
  const msg = err instanceof ConfigError ? err.message : ((err as Error)?.stack ?? String(err));
  process.stderr.write(`[local] failed to start: ${msg}\n`);
  process.exit(1);
});
