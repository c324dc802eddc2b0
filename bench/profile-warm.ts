import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { loadGroupHandler } from '../bin/handlers';
import { startEmulators } from '../bin/local-emulators';
import { createRouter, lambdaContext, toApiGatewayEvent } from '../bin/local-server';
import { issueSessionToken } from '../shared/auth/jwt';
import { reloadConfig } from '../shared/config';
import { createApiKey } from '../shared/db/api-keys';
import { db, resetDbClient, tableName } from '../shared/db/client';
import { keys } from '../shared/db/keys';

/**
 * `npx tsx bench/profile-warm.ts <METHOD> <path> [jwt|apiKey] [calls]` under `node --cpu-prof`: one warm
 * route called in a loop the way bench/warm.ts calls it, to see where the pipeline's CPU goes.
 */
const [method = 'GET', routePath = '/api/agents', credential = 'jwt', calls = '5000'] = process.argv.slice(2);
const emulators = await startEmulators({ tableName: 'profile' });
try {
  reloadConfig({
    STAGE: 'test',
    LOG_LEVEL: 'SILENT',
    TABLE_NAME: 'profile',
    DYNAMODB_ENDPOINT: emulators.dynamoEndpoint,
    SQS_ENDPOINT: emulators.sqsEndpoint,
    PROVISIONING_QUEUE_URL: emulators.queueUrls.provisioning,
    EVENTS_QUEUE_URL: emulators.queueUrls.events,
    JWT_SECRET: 'bench-secret-that-is-long-enough-for-hs256-0123456789',
    APP_URL: 'http://127.0.0.1:3000',
    RATE_LIMITS: JSON.stringify({ agents: { limit: 1_000_000_000 } }),
    AWS_REGION: 'us-east-1',
  });
  resetDbClient();
  const userId = 'u_profile';
  const email = 'profile@example.com';
  const at = new Date().toISOString();
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.profile(userId), userId, email, name: email, plan: null, credits: 0, emailVerified: true, createdAt: at, updatedAt: at },
    }),
  );
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.agent(userId, 'agent_p'), agentId: 'agent_p', name: 'p' } }));
  const { token } = await issueSessionToken({ userId, email, role: 'user' });
  const { key } = await createApiKey(userId, email, 'profile', 10);
  const match = createRouter()(method, routePath);
  if (!match || match === 'method-not-allowed') throw new Error('no route');
  const handler = await loadGroupHandler(match.route.group);
  const headers = { 'content-type': 'application/json', 'user-agent': 'bench', authorization: `Bearer ${credential === 'apiKey' ? key : token}` };
  const body = method === 'POST' ? JSON.stringify({ agentId: 'agent_p', key: 'notes', memory: { text: 'hello', tags: ['a', 'b'], n: 42 } }) : undefined;
  const statuses: Record<string, number> = {};
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let n = 0; n < Number(calls); n++) {
    const event = toApiGatewayEvent({ method, path: routePath, headers, body, route: match.route, params: match.params });
    const result = await handler(event, lambdaContext(match.route.group, event.requestContext.requestId));
    statuses[String(result.statusCode)] = (statuses[String(result.statusCode)] ?? 0) + 1;
  }
  const c = process.cpuUsage(c0);
  process.stderr.write(
    `${calls} calls, ${((performance.now() - t0) / Number(calls)).toFixed(3)} ms wall/call, ${((c.user + c.system) / 1000 / Number(calls)).toFixed(3)} ms cpu/call, ${JSON.stringify(statuses)}\n`,
  );
} finally {
  resetDbClient();
  await emulators.stop();
}
