import { type DynamoDBClient, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from '../functions/api-keys/key';
import { ENV } from '../functions/config';
import type { InventoryItem } from '../functions/inventory/types';
import { ApiKeyTable } from '../functions/store/api-key-table';
import { signedInventoryAttributes } from '../functions/store/inventory-row';
import type { TableNames } from '../service/local-dynamodb';
import { SERVICE_NAME } from '../service/metric-names';

/** The demo inventory `npm start` loads into an empty table; includes the largest int64 id on purpose. */
export const DEMO_INVENTORY: readonly InventoryItem[] = [
  { petId: '1', quantity: 12, status: 'available' },
  { petId: '2', quantity: 3, status: 'available' },
  { petId: '3', quantity: 0, status: 'sold' },
  { petId: '4', quantity: 1, status: 'pending' },
  { petId: '10', quantity: 25, status: 'available' },
  { petId: '9007199254740993', quantity: 7, status: 'available' },
  { petId: '9223372036854775807', quantity: 2, status: 'pending' },
];

/** Points this process's handlers at a DynamoDB endpoint and tables (what the stack sets as Lambda environment). */
export function configureFunctionEnvironment(
  endpoint: string,
  tables: TableNames,
  env: NodeJS.ProcessEnv = process.env,
): void {
  env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
  env[ENV.inventoryTable] = tables.inventory;
  env[ENV.apiKeysTable] = tables.apiKeys;
  env[ENV.historyTable] = tables.history;
  if (tables.idempotency) env[ENV.idempotencyTable] = tables.idempotency;
  env.POWERTOOLS_SERVICE_NAME ??= SERVICE_NAME;
  env.POWERTOOLS_METRICS_DISABLED ??= 'true';
}

/** Loads the demo inventory when the table is empty, as an import would; returns how many entries it wrote. */
export async function seedDemoInventory(client: DynamoDBClient, tableName: string): Promise<number> {
  const existing = await client.send(new ScanCommand({ TableName: tableName, Limit: 1, Select: 'COUNT' }));
  if ((existing.Count ?? 0) > 0) return 0;
  for (const item of DEMO_INVENTORY) {
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: signedInventoryAttributes(item, {
          source: 'import',
          actor: 'npm start demo inventory',
          at: new Date().toISOString(),
        }),
      }),
    );
  }
  return DEMO_INVENTORY.length;
}

/** Registers `key` (it must have the issued shape), else a new one; returns it in clear for the terminal only. */
export async function registerLocalKey(
  client: DynamoDBClient,
  tableName: string,
  key?: string,
): Promise<{ key: string; created: boolean }> {
  const keys = new ApiKeyTable({ client, tableName });
  if (key !== undefined) {
    if (!isWellFormedApiKey(key)) {
      throw new Error(
        'PETSTORE_API_KEY must look like an issued key (psk_ and 43 base64url characters); unset it to get one.',
      );
    }
    if (await keys.findByHash(hashApiKey(key))) return { key, created: false };
    const { record } = generateApiKey('PETSTORE_API_KEY');
    await keys.create({ ...record, keyHash: hashApiKey(key) });
    return { key, created: true };
  }
  const generated = generateApiKey('npm-start');
  await keys.create(generated.record);
  return { key: generated.key, created: true };
}
