import { ENV, once, requireEnv } from '../config';
import { HttpError } from '../http/http-error';
import { METRIC_NAMES } from '../http/metric-names';
import { metrics } from '../http/metrics';
import { createApiHandler } from '../http/middleware';
import { jsonResponse, LAMBDA_MAX_PAYLOAD_BYTES } from '../http/responses';
import { inventoryListJson } from '../inventory/json';
import type { InventoryRepository } from '../inventory/repository';
import { lambdaDynamoClient } from '../store/dynamo-client';
import { InventoryTable } from '../store/inventory-table';

/** Room for the status, headers and JSON envelope around the body in the payload. */
const PAYLOAD_ENVELOPE_BYTES = 1024;

/** Dependencies of `GET /inventory`. */
export interface ListInventoryDeps {
  repository: InventoryRepository;
}

/** `GET /inventory` (listInventory): every entry, ordered by petId ascending. */
export function createHandler(deps: ListInventoryDeps | (() => ListInventoryDeps)) {
  const resolve = typeof deps === 'function' ? deps : () => deps;
  return createApiHandler(async function listInventory(event) {
    const items = await resolve().repository.listAll();
    metrics.addMetric(METRIC_NAMES.inventoryEntriesListed, 'Count', items.length);
    const body = inventoryListJson(items);
    // The body is ASCII and every entry has 8 quotes, each escaped with a backslash in the payload. Past the
    // limit Lambda would fail the invocation with no detail; this way the caller gets the Error body and the log
    // says why.
    const payloadBytes = body.length + 8 * items.length + PAYLOAD_ENVELOPE_BYTES;
    if (payloadBytes > LAMBDA_MAX_PAYLOAD_BYTES) {
      throw new HttpError(
        'INTERNAL',
        `The inventory has ${items.length} entries, more than one response can carry (6 MB). ` +
          `Request id: ${event.requestContext?.requestId ?? 'unknown'}.`,
        { cause: new Error(`list payload ~${payloadBytes} bytes exceeds Lambda's buffered response limit`) },
      );
    }
    return jsonResponse(200, body);
  });
}

export const handler = createHandler(
  once(() => ({
    repository: new InventoryTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.inventoryTable) }),
  })),
);
