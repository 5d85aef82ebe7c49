import { randomUUID } from 'node:crypto';
import { type DynamoDBClient, paginateScan } from '@aws-sdk/client-dynamodb';
import { ApiKeyAdminTable } from '../../cli/api-key-admin-table';
import { writeInventory } from '../../cli/inventory/batch-writer';
import { type ApiKeyScope, generateApiKey } from '../../functions/api-keys/key';
import type { InventoryItem } from '../../functions/inventory/types';
import { createDynamoClient } from '../../functions/store/dynamo-client';
import { HistoryTable } from '../../functions/store/history-table';
import { inventoryAttributes } from '../../functions/store/inventory-row';
import { configureFunctionEnvironment } from '../../local/environment';
import { type LocalGateway, type LocalGatewayOptions, startLocalGateway } from '../../local/gateway';
import { startStreamPoller } from '../../local/lambda/stream-poller';
import { ensureTables, tableStreamArn } from '../../local/tables';
import type { TableNames } from '../../service/local-dynamodb';

/** The DynamoDB Local that globalSetup started. */
export function testEndpoint(): string {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('TEST_DYNAMODB_ENDPOINT is not set: run integration tests through jest');
  return endpoint;
}

/** A client for the test DynamoDB Local. */
export function testClient(options: { endpoint?: string; maxAttempts?: number } = {}): DynamoDBClient {
  return createDynamoClient({
    endpoint: options.endpoint ?? testEndpoint(),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    // Few attempts leave no retry to cover a stall of DynamoDB Local on a loaded machine: a long per-attempt limit.
    requestTimeoutMs: 10_000,
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
  });
}

/**
 * Creates a fresh set of tables with unique names; the inventory and history tables have their streams only when
 * `stream` is asked for. The integration tests share one DynamoDB Local, and in it writes to a stream-enabled table created after many
 * stream records exist are many times slower (docs/performance.md, "DynamoDB Local streams"): only the tests that
 * read the stream pay for it.
 */
export async function freshTables(client: DynamoDBClient, options: { stream?: boolean } = {}): Promise<TableNames> {
  const suffix = randomUUID().slice(0, 8);
  const tables = {
    inventory: `inventory-${suffix}`,
    apiKeys: `api-keys-${suffix}`,
    history: `history-${suffix}`,
    idempotency: `idempotency-${suffix}`,
  };
  await ensureTables(client, tables, { streams: options.stream ?? false });
  return tables;
}

/** Writes items as the import does (BatchWriteItem with retries); `padding` becomes an extra `notes` attribute. */
export async function putItems(
  client: DynamoDBClient,
  tableName: string,
  items: readonly (InventoryItem & { padding?: string })[],
): Promise<void> {
  await writeInventory(items, {
    client,
    tableName,
    toItem: (item) => ({
      ...inventoryAttributes(item),
      ...(item.padding ? { notes: { S: item.padding } } : {}),
    }),
  });
}

/**
 * Every row of a table as raw attribute maps, sorted by key: a byte-for-byte snapshot for "changes nothing".
 * `omit` leaves attributes out, e.g. `lastChange` to compare the stock two imports left (each run signs its rows).
 */
export async function snapshotTable(
  client: DynamoDBClient,
  tableName: string,
  options: { omit?: readonly string[] } = {},
): Promise<string> {
  const rows: string[] = [];
  for await (const page of paginateScan({ client }, { TableName: tableName, ConsistentRead: true }))
    for (const item of page.Items ?? [])
      rows.push(
        JSON.stringify(
          Object.entries(item)
            .filter(([name]) => !options.omit?.includes(name))
            .sort(([a], [b]) => a.localeCompare(b)),
        ),
      );
  return rows.sort().join('\n');
}

/** A local gateway over fresh tables, with a demo inventory and a key. */
export interface TestStack {
  client: DynamoDBClient;
  tables: TableNames;
  gateway: LocalGateway;
  url: string;
  key: string;
  authHeader: Record<string, string>;
  /** Issues another key (a write key unless `scope` says otherwise); returns it in clear. */
  createKey(name?: string, scope?: ApiKeyScope): Promise<{ key: string; keyId: string }>;
  close(): Promise<void>;
}

/** The inventory every gateway test starts from. */
export const TEST_INVENTORY: readonly InventoryItem[] = [
  { petId: '1', quantity: 12, status: 'available' },
  { petId: '2', quantity: 3, status: 'pending' },
  { petId: '10', quantity: 0, status: 'sold' },
  { petId: '-5', quantity: 4, status: 'available' },
  { petId: '9007199254740993', quantity: 7, status: 'available' },
  { petId: '9223372036854775807', quantity: 2, status: 'pending' },
];

/**
 * Starts the real local gateway over fresh tables in the test DynamoDB Local; with `history`, also the history
 * function on the inventory table's stream, as `npm start` runs it (a stream slows DynamoDB Local: only when asked).
 */
export async function startTestStack(
  options: LocalGatewayOptions & { inventory?: readonly InventoryItem[]; history?: boolean } = {},
): Promise<TestStack> {
  const client = testClient();
  const tables = await freshTables(client, { stream: options.history ?? false });
  configureFunctionEnvironment(testEndpoint(), tables);
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  // Imported when asked: a handler module creates its logger and tracer as it loads, from the environment then, and
  // the tests of logging and tracing set theirs before they start a stack.
  const recordHistory = options.history ? await import('../../functions/handlers/record-history') : undefined;
  const history = recordHistory
    ? startStreamPoller({
        endpoint: testEndpoint(),
        streamArn: await tableStreamArn(client, tables.inventory),
        handler: recordHistory.createHandler({ history: new HistoryTable({ client, tableName: tables.history }) }),
        pollIntervalMs: 50,
        log: () => undefined,
      })
    : undefined;
  await putItems(client, tables.inventory, options.inventory ?? TEST_INVENTORY);
  const keys = new ApiKeyAdminTable({ client, tableName: tables.apiKeys });
  const createKey = async (name = 'test', scope?: ApiKeyScope) => {
    const { key, record } = generateApiKey(name, new Date(), scope);
    await keys.create(record);
    return { key, keyId: record.keyId };
  };
  const { key } = await createKey();
  const gateway = await startLocalGateway(0, { log: () => undefined, ...options });
  return {
    client,
    tables,
    gateway,
    url: gateway.url,
    key,
    authHeader: { Authorization: `Bearer ${key}` },
    createKey,
    close: async () => {
      await history?.stop();
      await gateway.close();
      client.destroy();
    },
  };
}
