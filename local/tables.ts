import {
  type AttributeDefinition,
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  type KeySchemaElement,
  paginateListTables,
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
  INVENTORY_LIST_INDEX,
  INVENTORY_STREAM_VIEW,
  INVENTORY_TABLE_KEY,
} from '../service/names';

const INVENTORY_STREAM: StreamSpecification = { StreamEnabled: true, StreamViewType: INVENTORY_STREAM_VIEW };

/** The list index as the stack defines it (infra/inventory-stack.ts): the same keys and projection. */
const LIST_INDEX: GlobalSecondaryIndex = {
  IndexName: INVENTORY_LIST_INDEX.name,
  KeySchema: [
    { AttributeName: INVENTORY_LIST_INDEX.partition.name, KeyType: 'HASH' },
    { AttributeName: INVENTORY_LIST_INDEX.sort.name, KeyType: 'RANGE' },
  ],
  Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...INVENTORY_LIST_INDEX.projected] },
};

const LIST_INDEX_SHARD_ATTRIBUTE: AttributeDefinition = {
  AttributeName: INVENTORY_LIST_INDEX.partition.name,
  AttributeType: INVENTORY_LIST_INDEX.partition.type,
};

interface TableShape {
  name: string;
  keys: readonly { name: string; type: 'N' | 'S' }[];
  stream?: StreamSpecification;
  index?: GlobalSecondaryIndex;
}

/**
 * Creates the service's tables if they are missing, with the stack's key schemas, the inventory table's stream
 * (new and old images) and its list index; an inventory table made before the stream or the index existed gets
 * them. The idempotency table
 * gets no TTL here: the records carry their expiry, which Powertools checks itself; TTL only clears them away on a
 * stage. `inventoryStream: false` leaves
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
    {
      name: names.inventory,
      keys: [INVENTORY_TABLE_KEY],
      index: LIST_INDEX,
      ...(stream ? { stream: INVENTORY_STREAM } : {}),
    },
    { name: names.apiKeys, keys: [API_KEYS_TABLE_KEY] },
    { name: names.history, keys: [HISTORY_TABLE_KEY.partition, HISTORY_TABLE_KEY.sort] },
    ...(names.idempotency ? [{ name: names.idempotency, keys: [IDEMPOTENCY_TABLE_KEY] }] : []),
  ];
  for (const table of wanted) {
    if (existing.has(table.name)) {
      if (table.stream) await ensureStream(client, table.name, table.stream);
      if (table.index) await ensureIndex(client, table.name, table.index);
      continue;
    }
    const attributes: AttributeDefinition[] = table.keys.map((key) => ({
      AttributeName: key.name,
      AttributeType: key.type,
    }));
    if (table.index) attributes.push(LIST_INDEX_SHARD_ATTRIBUTE);
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
          ...(table.index ? { GlobalSecondaryIndexes: [table.index] } : {}),
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

/** Adds the list index to an inventory table made before it. */
async function ensureIndex(client: DynamoDBClient, tableName: string, index: GlobalSecondaryIndex): Promise<void> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (Table?.GlobalSecondaryIndexes?.some((existing) => existing.IndexName === index.IndexName)) return;
  await client.send(
    new UpdateTableCommand({
      TableName: tableName,
      AttributeDefinitions: [INVENTORY_TABLE_KEY_ATTRIBUTE, LIST_INDEX_SHARD_ATTRIBUTE],
      GlobalSecondaryIndexUpdates: [{ Create: index }],
    }),
  );
  // The table stays ACTIVE while a new index is built: wait for the index itself before writing to the table.
  for (let waited = 0; ; waited += 200) {
    const { Table: table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const status = table?.GlobalSecondaryIndexes?.find(
      (existing) => existing.IndexName === index.IndexName,
    )?.IndexStatus;
    if (status === 'ACTIVE') break;
    if (waited > 60_000)
      throw new Error(`Index ${index.IndexName} of ${tableName} is not active after 60 s (${status})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const INVENTORY_TABLE_KEY_ATTRIBUTE: AttributeDefinition = {
  AttributeName: INVENTORY_TABLE_KEY.name,
  AttributeType: INVENTORY_TABLE_KEY.type,
};
