import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  ResourceInUseException,
  type StreamViewType,
  UpdateTableCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import type { TableNames } from '../service/local-dynamodb';
import {
  API_KEYS_TABLE_KEY,
  HISTORY_FEED_INDEX,
  HISTORY_STREAM_VIEW,
  HISTORY_TABLE_KEY,
  IDEMPOTENCY_TABLE_KEY,
  INVENTORY_LIST_INDEX,
  INVENTORY_STREAM_VIEW,
  INVENTORY_TABLE_KEY,
} from '../service/names';

type Key = { name: string; type: 'N' | 'S' };

interface TableShape {
  name: string;
  /** The partition key, then the sort key if any. */
  keys: readonly Key[];
  /** What its stream carries; none: no stream. */
  stream?: string;
  /** Its global secondary index, as the stack defines it, and the index's key attributes that are not the table's. */
  index?: { definition: GlobalSecondaryIndex; keys: readonly Key[] };
}

/** Creates the missing tables as the stack defines them, but the idempotency table's TTL: Powertools checks the
 * expiry its records carry. `streams: false` leaves the inventory's and the history's streams off (tests that do not
 * read them). */
export async function ensureTables(
  client: DynamoDBClient,
  names: TableNames,
  options: { streams?: boolean } = {},
): Promise<void> {
  const wanted: TableShape[] = [
    {
      name: names.inventory,
      keys: [INVENTORY_TABLE_KEY],
      index: { definition: LIST_INDEX, keys: [INVENTORY_LIST_INDEX.partition] },
      stream: options.streams === false ? undefined : INVENTORY_STREAM_VIEW,
    },
    { name: names.apiKeys, keys: [API_KEYS_TABLE_KEY] },
    {
      name: names.history,
      keys: [HISTORY_TABLE_KEY.partition, HISTORY_TABLE_KEY.sort],
      index: { definition: FEED_INDEX, keys: [HISTORY_FEED_INDEX.partition, HISTORY_FEED_INDEX.sort] },
      stream: options.streams === false ? undefined : HISTORY_STREAM_VIEW,
    },
    ...(names.idempotency ? [{ name: names.idempotency, keys: [IDEMPOTENCY_TABLE_KEY] }] : []),
  ];
  for (const table of wanted) await createTable(client, table);
}

const keySchema = (keys: readonly Key[]) =>
  keys.map((key, index) => ({
    AttributeName: key.name,
    KeyType: index === 0 ? ('HASH' as const) : ('RANGE' as const),
  }));

/** The list index as the stack defines it (infra/inventory-stack.ts): the same keys and projection. */
const LIST_INDEX: GlobalSecondaryIndex = {
  IndexName: INVENTORY_LIST_INDEX.name,
  KeySchema: keySchema([INVENTORY_LIST_INDEX.partition, INVENTORY_LIST_INDEX.sort]),
  Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...INVENTORY_LIST_INDEX.projected] },
};

/** The feed index as the stack defines it (infra/constructs/inventory-history.ts). */
const FEED_INDEX: GlobalSecondaryIndex = {
  IndexName: HISTORY_FEED_INDEX.name,
  KeySchema: keySchema([HISTORY_FEED_INDEX.partition, HISTORY_FEED_INDEX.sort]),
  Projection: { ProjectionType: 'ALL' },
};

async function createTable(client: DynamoDBClient, table: TableShape): Promise<void> {
  const attributes = [...table.keys, ...(table.index?.keys ?? [])];
  try {
    await client.send(
      new CreateTableCommand({
        TableName: table.name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: attributes.map((key) => ({ AttributeName: key.name, AttributeType: key.type })),
        KeySchema: keySchema(table.keys),
        ...(table.stream
          ? { StreamSpecification: { StreamEnabled: true, StreamViewType: table.stream as StreamViewType } }
          : {}),
        ...(table.index ? { GlobalSecondaryIndexes: [table.index.definition] } : {}),
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    await addMissingIndex(client, table, attributes);
  }
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: table.name });
}

/** Gives a table kept from an earlier `npm start` (its data folder) the index the stack defines, if it lacks it. */
async function addMissingIndex(client: DynamoDBClient, table: TableShape, attributes: readonly Key[]): Promise<void> {
  const index = table.index?.definition;
  if (!index) return;
  const { Table } = await client.send(new DescribeTableCommand({ TableName: table.name }));
  if (Table?.GlobalSecondaryIndexes?.some((existing) => existing.IndexName === index.IndexName)) return;
  await client.send(
    new UpdateTableCommand({
      TableName: table.name,
      AttributeDefinitions: attributes.map((key) => ({ AttributeName: key.name, AttributeType: key.type })),
      GlobalSecondaryIndexUpdates: [{ Create: index }],
    }),
  );
  // Writes and reads wait until the index is built (DynamoDB Local: the table's rows, within a second or so).
  for (let waited = 0; ; waited += 100) {
    const { Table: updated } = await client.send(new DescribeTableCommand({ TableName: table.name }));
    const status = updated?.GlobalSecondaryIndexes?.find((existing) => existing.IndexName === index.IndexName);
    if (updated?.TableStatus === 'ACTIVE' && status?.IndexStatus === 'ACTIVE') return;
    if (waited > 30_000) throw new Error(`${table.name}: index ${index.IndexName} not built within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The ARN of a table's stream. @throws Error when the table has no stream. */
export async function tableStreamArn(client: DynamoDBClient, tableName: string): Promise<string> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (!Table?.LatestStreamArn || !Table.StreamSpecification?.StreamEnabled) {
    throw new Error(`Table ${tableName} has no stream: run ensureTables first`);
  }
  return Table.LatestStreamArn;
}
