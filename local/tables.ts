import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  ResourceInUseException,
  type StreamViewType,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import type { TableNames } from '../service/local-dynamodb';
import {
  API_KEYS_TABLE_KEY,
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
  listIndex?: boolean;
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
      listIndex: true,
      stream: options.streams === false ? undefined : INVENTORY_STREAM_VIEW,
    },
    { name: names.apiKeys, keys: [API_KEYS_TABLE_KEY] },
    {
      name: names.history,
      keys: [HISTORY_TABLE_KEY.partition, HISTORY_TABLE_KEY.sort],
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

async function createTable(client: DynamoDBClient, table: TableShape): Promise<void> {
  const attributes = table.listIndex ? [...table.keys, INVENTORY_LIST_INDEX.partition] : table.keys;
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
        ...(table.listIndex ? { GlobalSecondaryIndexes: [LIST_INDEX] } : {}),
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: table.name });
}

/** The ARN of a table's stream. @throws Error when the table has no stream. */
export async function tableStreamArn(client: DynamoDBClient, tableName: string): Promise<string> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (!Table?.LatestStreamArn || !Table.StreamSpecification?.StreamEnabled) {
    throw new Error(`Table ${tableName} has no stream: run ensureTables first`);
  }
  return Table.LatestStreamArn;
}
