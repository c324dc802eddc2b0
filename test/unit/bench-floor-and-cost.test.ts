import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { inject, describe, expect, it } from 'vitest';
import { costPerMillion, PRICES_US_EAST_1, requestUnits } from '#bench/cost';
import { createFloorHandler } from '#bench/floor';
import { db } from '#data/client';
import * as keys from '#data/keys';

const e = inject('emulators');

describe('bench cost table', () => {
  it('counts on-demand units per command: consistency, batches and transactions', () => {
    expect(
      requestUnits([
        { name: 'GetCommand', input: {} },
        { name: 'QueryCommand', input: { ConsistentRead: true } },
        { name: 'UpdateCommand', input: {} },
        { name: 'TransactWriteCommand', input: { TransactItems: [{}, {}] } },
        { name: 'BatchWriteCommand', input: { RequestItems: { t: [{}, {}] } } },
        { name: 'BatchGetCommand', input: { RequestItems: { t: { Keys: [{}, {}, {}] } } } },
      ]),
    ).toEqual({ reads: 3, writes: 7 });
    expect(() => requestUnits([{ name: 'ExecuteStatementCommand', input: {} }])).toThrow(/no request-unit rule/);
  });

  it('prices a million requests from the CPU, rounded up to whole billed milliseconds', () => {
    const row = costPerMillion(1.2, { reads: 1, writes: 1 }, 0);
    expect(row.billedMs).toBe(2);
    // 1 GB for 2 ms, a million times: 2,000 GB-s.
    expect(row.lambdaDuration).toBeCloseTo(2000 * PRICES_US_EAST_1.lambdaArm64PerGbSecond, 9);
    expect(row.kms).toBe(0);
    expect(costPerMillion(0.01, { reads: 0, writes: 0 }, 2).kms).toBeCloseTo(2 * 3, 9);
    expect(row.total).toBeCloseTo(
      row.apiGateway +
        row.lambdaRequests +
        row.lambdaDuration +
        PRICES_US_EAST_1.dynamoReadRequestUnitPerMillion +
        PRICES_US_EAST_1.dynamoWriteRequestUnitPerMillion,
      9,
    );
  });
});

describe('bench floor handler', () => {
  it('replays the recorded document-client commands, in order, on the same table', async () => {
    const key = keys.agent(`u_benchfloor_${Date.now()}`, 'agent_floor');
    const floor = createFloorHandler({
      endpoint: e.dynamoEndpoint,
      region: 'us-east-1',
      commands: [
        { name: 'PutCommand', input: { TableName: e.tableName, Item: { ...key, n: 0 } } },
        { name: 'UpdateCommand', input: { TableName: e.tableName, Key: key, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } } },
        { name: 'GetCommand', input: { TableName: e.tableName, Key: key } },
      ],
    });
    const answer = await floor();
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ ...key, n: 1 });
    const stored = await db().send(new GetCommand({ TableName: e.tableName, Key: key, ConsistentRead: true }));
    expect(stored.Item).toEqual({ ...key, n: 1 });
  });

  it('refuses a command it cannot replay instead of skipping it', () => {
    expect(() => createFloorHandler({ endpoint: e.dynamoEndpoint, region: 'us-east-1', commands: [{ name: 'Nope', input: {} }] })).toThrow(
      /cannot replay Nope/,
    );
  });
});
