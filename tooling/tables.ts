import {
  CreateTableCommand,
  type DynamoDBClient,
  paginateListTables,
  ResourceInUseException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { API_KEYS_TABLE_KEY, INVENTORY_TABLE_KEY } from '../infra/shared-names';

/** Names of the two tables. */
export interface TableNames {
  inventory: string;
  apiKeys: string;
}

/** Table names of the local gateway (the deployed stack lets CloudFormation name them). */
export const LOCAL_TABLE_NAMES: TableNames = { inventory: 'petstore-inventory', apiKeys: 'petstore-api-keys' };

/** Creates the inventory and API-key tables if they are missing, with the same key schema as the stack. */
export async function ensureTables(client: DynamoDBClient, names: TableNames): Promise<void> {
  const existing = new Set<string>();
  for await (const page of paginateListTables({ client }, {}))
    for (const name of page.TableNames ?? []) existing.add(name);
  const wanted = [
    { name: names.inventory, key: INVENTORY_TABLE_KEY },
    { name: names.apiKeys, key: API_KEYS_TABLE_KEY },
  ];
  for (const table of wanted) {
    if (existing.has(table.name)) continue;
    try {
      await client.send(
        new CreateTableCommand({
          TableName: table.name,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: table.key.name, AttributeType: table.key.type }],
          KeySchema: [{ AttributeName: table.key.name, KeyType: 'HASH' }],
        }),
      );
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: table.name });
  }
}
