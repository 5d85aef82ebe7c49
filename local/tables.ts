import {
  type AttributeDefinition,
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  paginateListTables,
  paginateScan,
  ResourceInUseException,
  type StreamSpecification,
  UpdateTableCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import type { TableNames } from '../service/local-dynamodb';
import {
  API_KEYS_TABLE_KEY,
  HISTORY_TABLE_KEY,
  IDEMPOTENCY_TABLE_KEY,
  INVENTORY_STREAM_VIEW,
  INVENTORY_TABLE_KEY,
} from '../service/names';

const INVENTORY_STREAM: StreamSpecification = { StreamEnabled: true, StreamViewType: INVENTORY_STREAM_VIEW };

interface TableShape {
  name: string;
  keys: readonly { name: string; type: 'N' | 'S' }[];
  stream?: StreamSpecification;
}

/**
 * Creates the service's tables if they are missing, with the stack's key schemas and the inventory table's stream
 * (new and old images); an inventory table made before the stream existed gets it. The idempotency table gets no
 * TTL here: the records carry their expiry, which Powertools checks itself; TTL only clears them away on a stage. `inventoryStream: false` leaves
 * the stream off on a new inventory table (tests that do not read it: see test/helpers/local-stack.ts).
 */
export async function ensureTables(
  client: DynamoDBClient,
  names: TableNames,
  options: { inventoryStream?: boolean } = {},
): Promise<void> {
  const stream = options.inventoryStream ?? true;
  const existing = new Set<string>();
  for await (const page of paginateListTables({ client }, {}))
    for (const name of page.TableNames ?? []) existing.add(name);
  const wanted: TableShape[] = [
    { name: names.inventory, keys: [INVENTORY_TABLE_KEY], ...(stream ? { stream: INVENTORY_STREAM } : {}) },
    { name: names.apiKeys, keys: [API_KEYS_TABLE_KEY] },
    { name: names.history, keys: [HISTORY_TABLE_KEY.partition, HISTORY_TABLE_KEY.sort] },
    ...(names.idempotency ? [{ name: names.idempotency, keys: [IDEMPOTENCY_TABLE_KEY] }] : []),
  ];
  for (const table of wanted) {
    if (existing.has(table.name)) {
      if (table.stream) await ensureStream(client, table.name, table.stream);
      continue;
    }
    const attributes: AttributeDefinition[] = table.keys.map((key) => ({
      AttributeName: key.name,
      AttributeType: key.type,
    }));
    const keySchema: KeySchemaElement[] = table.keys.map((key, index) => ({
      AttributeName: key.name,
      KeyType: index === 0 ? 'HASH' : 'RANGE',
    }));
    try {
      await client.send(
        new CreateTableCommand({
          TableName: table.name,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: attributes,
          KeySchema: keySchema,
          ...(table.stream ? { StreamSpecification: table.stream } : {}),
        }),
      );
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: table.name });
  }
}

/** The ARN of the inventory table's stream. @throws Error when the table has no stream. */
export async function inventoryStreamArn(client: DynamoDBClient, inventoryTable: string): Promise<string> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: inventoryTable }));
  if (!Table?.LatestStreamArn || !Table.StreamSpecification?.StreamEnabled)
    throw new Error(`Table ${inventoryTable} has no stream: run ensureTables first`);
  return Table.LatestStreamArn;
}

async function ensureStream(client: DynamoDBClient, tableName: string, stream: StreamSpecification): Promise<void> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (Table?.StreamSpecification?.StreamEnabled) return;
  await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: stream }));
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: tableName });
}

/**
 * The read units each page of a strongly consistent, single-segment Scan of the whole table consumes, in order, as
 * DynamoDB reports them (`ReturnConsumedCapacity`), with the list's projection (a Scan's units do not depend on it).
 */
export async function scanReadUnitsPerPage(client: DynamoDBClient, tableName: string): Promise<number[]> {
  const units: number[] = [];
  const pages = paginateScan(
    { client },
    {
      TableName: tableName,
      ConsistentRead: true,
      ProjectionExpression: 'petId, quantity, #status',
      ExpressionAttributeNames: { '#status': 'status' },
      ReturnConsumedCapacity: 'TOTAL',
    },
  );
  for await (const page of pages) units.push(page.ConsumedCapacity?.CapacityUnits ?? Number.NaN);
  return units;
}
