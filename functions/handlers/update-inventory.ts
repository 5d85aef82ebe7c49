import type { APIGatewayProxyEvent } from 'aws-lambda';
import { METRIC_NAMES } from '../../service/metric-names';
import { type Deps, ENV, once, requireEnv, resolveDeps } from '../config';
import {
  createIdempotentRunner,
  type IdempotentRunner,
  idempotentChangeId,
  parseIdempotencyKey,
} from '../http/idempotency';
import { readJsonBody } from '../http/json-body';
import { createApiHandler, refusalOf } from '../http/middleware';
import { jsonResponse } from '../http/responses';
import { inventoryItemJson } from '../inventory/json';
import { parsePetId } from '../inventory/pet-id';
import type { InventoryRepository } from '../inventory/repository';
import type { ChangeOrigin } from '../inventory/types';
import { parseInventoryUpdate } from '../inventory/update';
import { logger } from '../observability/logger';
import { metrics } from '../observability/metrics';
import { idempotencyTable } from '../store/idempotency-table';
import { InventoryTable } from '../store/inventory-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

/** Dependencies of `PATCH /inventory/{petId}`. */
export interface UpdateInventoryDeps {
  repository: InventoryRepository;
  /** Runs a request with an `Idempotency-Key` once per key. */
  idempotent: IdempotentRunner;
}

/** `PATCH /inventory/{petId}` (updateInventory): sets or adjusts the quantity, checks in docs/api.md's order. */
export function createHandler(deps: Deps<UpdateInventoryDeps>) {
  const resolve = resolveDeps(deps);
  return createApiHandler(async function updateInventory(event, context) {
    const petId = parsePetId(event.pathParameters?.petId);
    const idempotencyKey = parseIdempotencyKey(event);
    const change = parseInventoryUpdate(readJsonBody(event));
    const { repository, idempotent } = resolve();
    const apply = async (origin: ChangeOrigin) => {
      const item = await repository.applyChange(petId, change, origin);
      metrics.addMetric(METRIC_NAMES.inventoryUpdated, 'Count', 1);
      return jsonResponse(200, inventoryItemJson(item));
    };
    const origin = apiChangeOrigin(event);
    if (idempotencyKey === undefined) return apply(origin);
    const requestId = event.requestContext?.requestId ?? context.awsRequestId;
    const request = { keyId: origin.actor, idempotencyKey, request: { petId, ...change } };
    return idempotent(request, context, async () => {
      try {
        // Named after the key, so a repeat whose first answer could not be kept finds its change on the entry.
        return await apply({ ...origin, changeId: idempotentChangeId(request) });
      } catch (error) {
        // A refusal (404, 409) is the first answer a retry must get back; a server fault keeps nothing.
        const refusal = refusalOf(error, requestId);
        if (refusal === undefined) throw error;
        return refusal;
      }
    });
  });
}

/** Who and why for the history: the caller's key id (set by the authorizer) and the API Gateway request id. */
function apiChangeOrigin(event: APIGatewayProxyEvent): ChangeOrigin {
  const { authorizer, requestId } = event.requestContext;
  const keyId = authorizer?.keyId ?? authorizer?.principalId;
  return {
    source: 'api',
    actor: typeof keyId === 'string' && keyId.length > 0 ? keyId : 'unknown',
    ...(requestId ? { requestId } : {}),
    at: new Date().toISOString(),
  };
}

/** Built on the first request with an Idempotency-Key: a plain PATCH needs no idempotency table. */
const idempotentRunner = once(() =>
  createIdempotentRunner({
    persistenceStore: idempotencyTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.idempotencyTable) }),
    operation: 'updateInventory',
    onAnswerNotKept: (error) => logger.error('idempotent answer not kept', { error }),
    onReplay: () => metrics.addMetric(METRIC_NAMES.idempotentReplayed, 'Count', 1),
  }),
);

export const handler = createHandler(
  once(() => ({
    repository: new InventoryTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.inventoryTable) }),
    idempotent: (request, context, operation) => idempotentRunner()(request, context, operation),
  })),
);
