import { METRIC_NAMES } from '../../service/metric-names';
import { type Deps, ENV, once, requireEnv, resolveDeps } from '../config';
import { lambdaIdempotentRunner, runChange } from '../http/change-request';
import { type IdempotentRunner, parseIdempotencyKey } from '../http/idempotency';
import { readJsonBody } from '../http/json-body';
import { createApiHandler } from '../http/middleware';
import { jsonResponse } from '../http/responses';
import { inventoryItemJson } from '../inventory/json';
import { parsePetId } from '../inventory/pet-id';
import type { InventoryRepository } from '../inventory/repository';
import { parseInventoryUpdate } from '../inventory/update';
import { metrics } from '../observability/metrics';
import { InventoryTable } from '../store/inventory-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

/** `PATCH /inventory/{petId}` (updateInventory): sets or adjusts the quantity, checks in docs/api.md's order. */
export function createHandler(
  deps: Deps<{ repository: Pick<InventoryRepository, 'applyChange'>; idempotent: IdempotentRunner }>,
) {
  const resolve = resolveDeps(deps);
  return createApiHandler(async function updateInventory(event, context) {
    const petId = parsePetId(event.pathParameters?.petId);
    const idempotencyKey = parseIdempotencyKey(event);
    const change = parseInventoryUpdate(readJsonBody(event));
    const { repository, idempotent } = resolve();
    return runChange(event, context, { idempotent, idempotencyKey, request: { petId, ...change } }, async (origin) => {
      const item = await repository.applyChange(petId, change, origin);
      metrics.addMetric(METRIC_NAMES.inventoryUpdated, 'Count', 1);
      return jsonResponse(200, inventoryItemJson(item));
    });
  });
}

export const handler = createHandler(
  once(() => ({
    repository: new InventoryTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.inventoryTable) }),
    idempotent: lambdaIdempotentRunner('updateInventory'),
  })),
);
