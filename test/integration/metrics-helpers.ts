import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { reloadConfig } from '#platform/config';
import { recordSample, type SampleInput } from '#data/metrics';
import { createAgent } from '#data/agents';
import { db, resetDbClient } from '#data/client';
import { ensureInstance, settleLaunch, settlePendingAgents } from '#data/instances';
import { createTableInput } from '#data/table';

/** Shared by the heartbeat and metrics integration tests. */

/**
 * A table of this test file's own in DynamoDB Local, so platform-wide figures (counters, the due
 * index) hold only what the file wrote, whatever other test files do at the same time.
 */
export async function isolatedTable() {
  const previous = process.env.TABLE_NAME;
  const name = `metrics-test-${randomUUID().slice(0, 8)}`;
  reloadConfig({ TABLE_NAME: name });
  resetDbClient();
  await db().send(new CreateTableCommand(createTableInput(name)));
  return {
    name,
    async drop() {
      await db().send(new DeleteTableCommand({ TableName: name }));
      reloadConfig({ TABLE_NAME: previous });
      resetDbClient();
    },
  };
}

export async function batchPut(items: Record<string, unknown>[]) {
  const table = process.env.TABLE_NAME!;
  for (let i = 0; i < items.length; i += 25) {
    let pending: Record<string, unknown> | undefined = { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) };
    while (pending && Object.keys(pending).length) {
      const out = await db().send(new BatchWriteCommand({ RequestItems: pending as never }));
      pending = out.UnprocessedItems as Record<string, unknown> | undefined;
    }
  }
}

export interface ReadTally {
  /** Items returned by GetItem, Query and BatchGetItem. */
  items: number;
  /** Items returned by queries of gsi1. */
  indexItems: number;
  commands: Record<string, number>;
}

/** Counts what the DynamoDB document client reads, by wrapping its `send`. */
export function countReads() {
  const client = db();
  const original = client.send.bind(client);
  const tally: ReadTally = { items: 0, indexItems: 0, commands: {} };
  client.send = (async (command: { constructor: { name: string }; input?: { IndexName?: string } }, ...rest: unknown[]) => {
    const out = (await (original as (...a: unknown[]) => Promise<any>)(command, ...rest)) as any;
    const name = command.constructor.name;
    tally.commands[name] = (tally.commands[name] ?? 0) + 1;
    const batch = Object.values((out?.Responses ?? {}) as Record<string, unknown[]>).reduce((n, list) => n + list.length, 0);
    tally.items += (out?.Items?.length ?? 0) + (out?.Item ? 1 : 0) + batch;
    if (command.input?.IndexName === 'gsi1') tally.indexItems += out?.Items?.length ?? 0;
    return out;
  }) as typeof client.send;
  return {
    tally,
    restore() {
      client.send = original;
    },
  };
}

/**
 * An agent runtime on loopback speaking runtime/routes.ts's wire format for `GET /health` and
 * `GET /stats`, behind the instance's gateway token; `healthy` and the figures are set by the test.
 */
export async function fakeRuntime(token: string) {
  const state = { healthy: true, cpuPercent: 12.5, usedBytes: 256 * 1024 * 1024, limitBytes: 1024 * 1024 * 1024, healthCalls: 0 };
  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${token}`) return send(401, { error: 'invalid or missing gateway token', code: 'TOKEN_INVALID' });
    if (req.url === '/health') {
      state.healthCalls += 1;
      return state.healthy ? send(200, { status: 'ok', runtimeVersion: '1.0.0', agents: 1, uptimeMs: 1000 }) : send(503, { status: 'starting' });
    }
    if (req.url === '/stats') {
      return send(200, {
        status: 'running',
        runtimeVersion: '1.0.0',
        agents: 1,
        cpuPercent: state.cpuPercent,
        memory: { usedBytes: state.usedBytes, limitBytes: state.limitBytes },
        uptimeMs: 1000,
        pids: 7,
        network: { rxBytes: 10, txBytes: 20 },
      });
    }
    return send(404, { error: 'not found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** An account whose instance runs at `endpoint` with `agents` agents joined, through the agents repositories. */
export async function runningInstance(userId: string, endpoint: string, agents = 1) {
  await ensureInstance(userId, { ownerEmail: `${userId}@example.com`, image: 'runtime:test', runtimeVersion: '1.0.0', jobOwner: 'test' });
  const ids: string[] = [];
  for (let i = 0; i < agents; i += 1) ids.push((await createAgent(userId, { name: `agent ${i}`, model: 'test/model', config: {}, source: 'api' }, 100)).id);
  await settleLaunch(userId, 1, { status: 'running', set: { handle: { launcher: 'local', id: `fake-${userId}`, endpoint } } });
  await settlePendingAgents(userId);
  return ids;
}

/** Records a heartbeat sample `agoMs` before `now`: a healthy, idle instance unless `s` says otherwise. */
export function sampleAt(userId: string, agoMs: number, s: Partial<SampleInput> = {}, now = Date.now()) {
  return recordSample(userId, {
    timestamp: new Date(now - agoMs).toISOString(),
    cpu: 10,
    memory: 20,
    messages: 0,
    errors: 0,
    responseMsTotal: 0,
    reachable: true,
    healthy: true,
    ...s,
  });
}
