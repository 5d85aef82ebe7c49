import { METRIC_NAMES } from '../../service/metric-names';
import { type Deps, ENV, once, requireEnv, resolveDeps } from '../config';
import { createApiHandler } from '../http/middleware';
import { jsonResponse } from '../http/responses';
import { InventoryItemNotFoundError } from '../inventory/errors';
import { inventoryItemJson } from '../inventory/json';
import { parsePetId } from '../inventory/pet-id';
import type { InventoryRepository } from '../inventory/repository';
import { metrics } from '../observability/metrics';
import { InventoryTable } from '../store/inventory-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

/** `GET /inventory/{petId}` (getInventoryEntry): one entry, strongly consistent, so a writer reads its write. */
export function createHandler(deps: Deps<{ repository: Pick<InventoryRepository, 'get'> }>) {
  const resolve = resolveDeps(deps);
  return createApiHandler(async function getInventoryEntry(event) {
    const petId = parsePetId(event.pathParameters?.petId);
    const item = await resolve().repository.get(petId);
    if (!item) throw new InventoryItemNotFoundError(petId);
    metrics.addMetric(METRIC_NAMES.inventoryEntryRead, 'Count', 1);
    return jsonResponse(200, inventoryItemJson(item));
  });
}

export const handler = createHandler(
  once(() => ({
    repository: new InventoryTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.inventoryTable) }),
  })),
);
