import type { APIGatewayProxyEvent } from 'aws-lambda';
import { METRIC_NAMES } from '../../service/metric-names';
import { type Deps, ENV, once, requireEnv, resolveDeps } from '../config';
import { readJsonBody } from '../http/json-body';
import { createApiHandler } from '../http/middleware';
import { jsonResponse } from '../http/responses';
import { inventoryItemJson } from '../inventory/json';
import { parsePetId } from '../inventory/pet-id';
import type { InventoryRepository } from '../inventory/repository';
import type { ChangeOrigin } from '../inventory/types';
import { parseInventoryUpdate } from '../inventory/update';
import { metrics } from '../observability/metrics';
import { InventoryTable } from '../store/inventory-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

/** Dependencies of `PATCH /inventory/{petId}`. */
export interface UpdateInventoryDeps {
  repository: InventoryRepository;
}

/**
 * `PATCH /inventory/{petId}` (updateInventory): sets the quantity of an existing entry (only if the stored quantity
 * is `expectedQuantity`, when the body has it), leaves its status, and answers with the entry as stored. Checks run
 * in the documented order: petId, then body, then existence and the expected quantity.
 */
export function createHandler(deps: Deps<UpdateInventoryDeps>) {
  const resolve = resolveDeps(deps);
  return createApiHandler(async function updateInventory(event) {
    const petId = parsePetId(event.pathParameters?.petId);
    const update = parseInventoryUpdate(readJsonBody(event));
    const item = await resolve().repository.setQuantity(petId, update, apiChangeOrigin(event));
    metrics.addMetric(METRIC_NAMES.inventoryUpdated, 'Count', 1);
    return jsonResponse(200, inventoryItemJson(item));
  });
}

/** Who and why for the history: the caller's key id (set by the authorizer) and the API Gateway request id. */
export function apiChangeOrigin(event: APIGatewayProxyEvent, now = new Date()): ChangeOrigin {
  const { authorizer, requestId } = event.requestContext;
  const keyId = authorizer?.keyId ?? authorizer?.principalId;
  return {
    source: 'api',
    actor: typeof keyId === 'string' && keyId.length > 0 ? keyId : 'unknown',
    ...(requestId ? { requestId } : {}),
    at: now.toISOString(),
  };
}

export const handler = createHandler(
  once(() => ({
    repository: new InventoryTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.inventoryTable) }),
  })),
);
