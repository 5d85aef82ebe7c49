import { ENV, once, requireEnv } from '../config';
import { readJsonBody } from '../http/json-body';
import { metrics } from '../http/metrics';
import { createApiHandler } from '../http/middleware';
import { jsonResponse } from '../http/responses';
import { inventoryItemJson } from '../inventory/json';
import { parsePetId } from '../inventory/pet-id';
import type { InventoryRepository } from '../inventory/repository';
import { parseInventoryUpdate } from '../inventory/update';
import { lambdaDynamoClient } from '../store/dynamo-client';
import { InventoryTable } from '../store/inventory-table';

/** Dependencies of `PATCH /inventory/{petId}`. */
export interface UpdateInventoryDeps {
  repository: InventoryRepository;
}

/**
 * `PATCH /inventory/{petId}` (updateInventory): sets the quantity of an existing entry, leaves its status, and
 * answers with the entry as stored. Checks run in the documented order: petId, then body, then existence.
 */
export function createHandler(deps: UpdateInventoryDeps | (() => UpdateInventoryDeps)) {
  const resolve = typeof deps === 'function' ? deps : () => deps;
  return createApiHandler(async function updateInventory(event) {
    const petId = parsePetId(event.pathParameters?.petId);
    const { quantity } = parseInventoryUpdate(readJsonBody(event));
    const item = await resolve().repository.setQuantity(petId, quantity);
    metrics.addMetric('InventoryUpdated', 'Count', 1);
    return jsonResponse(200, inventoryItemJson(item));
  });
}

export const handler = createHandler(
  once(() => ({
    repository: new InventoryTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.inventoryTable) }),
  })),
);
