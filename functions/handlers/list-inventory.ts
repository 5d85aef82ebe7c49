import { once, requireEnv } from '../config';
import { metrics } from '../http/logger';
import { createApiHandler } from '../http/middleware';
import { jsonResponse } from '../http/responses';
import { inventoryListJson } from '../inventory/json';
import type { InventoryRepository } from '../inventory/repository';
import { createDynamoClient } from '../store/dynamo-client';
import { DynamoInventoryRepository } from '../store/dynamo-inventory-repository';

/** Dependencies of `GET /inventory`. */
export interface ListInventoryDeps {
  repository: InventoryRepository;
}

/** `GET /inventory` (listInventory): every entry, ordered by petId ascending. */
export function createHandler(deps: ListInventoryDeps | (() => ListInventoryDeps)) {
  const resolve = typeof deps === 'function' ? deps : () => deps;
  return createApiHandler(async function listInventory() {
    const items = await resolve().repository.listAll();
    metrics.addMetric('InventoryEntriesListed', 'Count', items.length);
    return jsonResponse(200, inventoryListJson(items));
  });
}

export const handler = createHandler(
  once(() => ({
    repository: new DynamoInventoryRepository({
      client: createDynamoClient(),
      tableName: requireEnv('INVENTORY_TABLE_NAME'),
    }),
  })),
);
