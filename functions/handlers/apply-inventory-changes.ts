import { METRIC_NAMES } from '../../service/metric-names';
import { type Deps, ENV, once, requireEnv, resolveDeps } from '../config';
import { lambdaIdempotentRunner, runChange } from '../http/change-request';
import { type IdempotentRunner, parseIdempotencyKey } from '../http/idempotency';
import { BATCH_BODY, readJsonBody } from '../http/json-body';
import { createApiHandler } from '../http/middleware';
import { jsonResponse } from '../http/responses';
import { inventoryItemJson } from '../inventory/json';
import type { InventoryRepository } from '../inventory/repository';
import { parseInventoryChanges } from '../inventory/update';
import { metrics } from '../observability/metrics';
import { InventoryTable } from '../store/inventory-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

/**
 * `POST /inventory/changes` (applyInventoryChanges): 1 to 100 changes, all or nothing, every rule of the body checked
 * before anything is written; the answer of a failure is the first failing change's, naming it.
 */
export function createHandler(
  deps: Deps<{ repository: Pick<InventoryRepository, 'applyChanges'>; idempotent: IdempotentRunner }>,
) {
  const resolve = resolveDeps(deps);
  return createApiHandler(async function applyInventoryChanges(event, context) {
    const idempotencyKey = parseIdempotencyKey(event);
    const changes = parseInventoryChanges(readJsonBody(event, BATCH_BODY));
    const { repository, idempotent } = resolve();
    return runChange(event, context, { idempotent, idempotencyKey, request: { changes } }, async (origin) => {
      const items = await repository.applyChanges(changes, origin);
      metrics.addMetric(METRIC_NAMES.inventoryUpdated, 'Count', items.length);
      return jsonResponse(200, `{"items":[${items.map(inventoryItemJson).join(',')}]}`);
    });
  });
}

export const handler = createHandler(
  once(() => ({
    repository: new InventoryTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.inventoryTable) }),
    idempotent: lambdaIdempotentRunner('applyInventoryChanges'),
  })),
);
