import { Readable } from 'node:stream';
import { COMMON_HEADERS } from '../../service/common-headers';
import { METRIC_NAMES } from '../../service/metric-names';
import { LIST_INVENTORY_TIMEOUT_SECONDS } from '../../service/routes';
import { type Deps, ENV, intEnv, once, requireEnv, resolveDeps } from '../config';
import { createStreamingApiHandler } from '../http/streaming';
import { inventoryListChunks } from '../inventory/json';
import type { InventoryRepository } from '../inventory/repository';
import { metrics } from '../observability/metrics';
import { InventoryTable } from '../store/inventory-table';
import { createLambdaDynamoClient } from '../store/lambda-dynamo-client';
import { ReadPace } from '../store/read-pace';

/**
 * Entries serialized per chunk of the streamed body: chunks of tens of KB keep writes few and the memory held by
 * the stream small (see docs/performance.md).
 */
export const ENTRIES_PER_CHUNK = 1024;

/**
 * How long after a list starts a throttled Scan page is still read again: half the function's time, so that the
 * body of the largest list still has the other half (docs/performance.md, "The list against the read cap").
 */
const THROTTLE_WINDOW_MS = (LIST_INVENTORY_TIMEOUT_SECONDS * 1000) / 2;

/** Dependencies of `GET /inventory`. */
export interface ListInventoryDeps {
  repository: InventoryRepository;
}

/**
 * `GET /inventory` (listInventory): every entry, ordered by petId ascending, streamed. The whole table is read
 * before the first byte (the order needs every entry), so a storage failure is still a 503 Error body; the body is
 * then written in chunks, gzipped when the client accepts it (functions/http/content-encoding.ts).
 */
export function createHandler(deps: Deps<ListInventoryDeps>) {
  const resolve = resolveDeps(deps);
  return createStreamingApiHandler(async function listInventory() {
    const items = await resolve().repository.listAll();
    metrics.addMetric(METRIC_NAMES.inventoryEntriesListed, 'Count', items.length);
    return {
      statusCode: 200,
      headers: { ...COMMON_HEADERS },
      body: Readable.from(inventoryListChunks(items, ENTRIES_PER_CHUNK), { objectMode: false }),
    };
  });
}

// The list's table, paced to its share of the read cap, on a client that slows down when throttled.
export const handler = createHandler(
  once(() => ({
    repository: new InventoryTable({
      client: createLambdaDynamoClient({ retryMode: 'adaptive' }),
      tableName: requireEnv(ENV.inventoryTable),
      pace: () => new ReadPace(intEnv(ENV.listReadUnitsPerSecond, 0), THROTTLE_WINDOW_MS),
    }),
  })),
);
