import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as documentCommands from '@aws-sdk/lib-dynamodb';

/**
 * The floor of a warm case: the same DynamoDB commands a route's handler makes, sent with
 * the bare document client and nothing else (no middleware, validation, auth or logging). Bundled
 * with the baseline's settings and loaded from that bundle, so it carries its own copy of the SDK;
 * what the real handler spends above this is the product's overhead.
 */

export interface RecordedCommand {
  /** The lib-dynamodb command class, e.g. GetCommand. */
  name: string;
  input: unknown;
}

export interface FloorOptions {
  endpoint: string;
  region: string;
  commands: RecordedCommand[];
}

type CommandClass = new (input: unknown) => documentCommands.DynamoDBDocumentClientCommand<object, object, object, object, object>;

export function createFloorHandler({ endpoint, region, commands }: FloorOptions) {
  const client = documentCommands.DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint, region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  const classes = commands.map((c) => {
    const commandClass = (documentCommands as unknown as Record<string, CommandClass | undefined>)[c.name];
    if (typeof commandClass !== 'function') throw new Error(`the floor cannot replay ${c.name}: not a lib-dynamodb command`);
    return commandClass;
  });
  return async () => {
    let last: Record<string, unknown> = {};
    for (const [i, commandClass] of classes.entries()) {
      last = (await client.send(new commandClass(commands[i]!.input) as never)) as Record<string, unknown>;
    }
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(last.Item ?? last.Items ?? last.Attributes ?? {}) };
  };
}
