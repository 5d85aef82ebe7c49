import { Readable } from 'node:stream';
import { COMMON_HEADERS } from '../../service/common-headers';
import { METRIC_NAMES } from '../../service/metric-names';
import { API_STAGE_NAME } from '../../service/routes';
import { type Deps, ENV, intEnv, once, requireEnv, resolveDeps } from '../config';
import { createStreamingApiHandler } from '../http/streaming';
import { batchesOf, inventoryListChunks } from '../inventory/json';
import { parseListQuery } from '../inventory/list-query';
import type { InventoryRepository } from '../inventory/repository';
import type { InventoryItem } from '../inventory/types';
import { metrics } from '../observability/metrics';
import { InventoryTable } from '../store/inventory-table';
import { createLambdaDynamoClient } from '../store/lambda-dynamo-client';

/**
 * Entries serialized per chunk of the streamed body: chunks of tens of KB keep writes few and the memory held by
 * the stream small (see docs/performance.md).
 */
export const ENTRIES_PER_CHUNK = 1024;

/**
 * How long the list waits out throttled pages without one coming back before it fails (a 503 before the first
 * byte, an aborted stream after it): past the read cap, other lists are running, and they end.
 */
const THROTTLE_WINDOW_MS = 60_000;

/** Dependencies of `GET /inventory`. */
export interface ListInventoryDeps {
  repository: InventoryRepository;
}

/**
 * `GET /inventory` (listInventory): the entries in petId order, streamed as they are read, gzipped when the client
 * accepts it (functions/http/content-encoding.ts). The first batch is read before the status is sent, so a storage
 * failure then is still a 503 Error body; a failure after it aborts the stream. With `limit` (and `after`) it
 * answers one page, read whole before it is sent, with a `Link: <…>; rel="next"` header (RFC 8288) when more follow.
 */
export function createHandler(deps: Deps<ListInventoryDeps>) {
  const resolve = resolveDeps(deps);
  return createStreamingApiHandler(async function listInventory(event) {
    const query = parseListQuery(event.queryStringParameters, event.multiValueQueryStringParameters);
    const { repository } = resolve();
    if (query.limit !== undefined) {
      // One entry more than asked tells whether another page follows.
      const items: InventoryItem[] = [];
      for await (const batch of repository.list({ ...query, limit: query.limit + 1 })) items.push(...batch);
      const page = items.slice(0, query.limit);
      const last = page.at(-1);
      metrics.addMetric(METRIC_NAMES.inventoryEntriesListed, 'Count', page.length);
      return {
        statusCode: 200,
        headers: {
          ...COMMON_HEADERS,
          ...(items.length > query.limit && last ? { Link: nextPageLink(query.limit, last.petId) } : {}),
        },
        body: Readable.from(inventoryListChunks(batchesOf(page, ENTRIES_PER_CHUNK)), { objectMode: false }),
      };
    }
    const batches = repository.list(query)[Symbol.asyncIterator]();
    // Before the status: a list that cannot start is an Error body, not a cut stream.
    const first = await batches.next();
    metrics.addMetric(METRIC_NAMES.inventoryListStreamStarted, 'Count', 1);
    return {
      statusCode: 200,
      headers: { ...COMMON_HEADERS },
      body: Readable.from(inventoryListChunks(countedBatches(first, batches)), { objectMode: false }),
    };
  });
}

/** The next page's reference (RFC 8288), relative to the API's host. */
export function nextPageLink(limit: number, lastPetId: string): string {
  return `</${API_STAGE_NAME}/inventory?limit=${limit}&after=${lastPetId}>; rel="next"`;
}

/**
 * The batches of a whole list, the first already read; once the last is handed on, the size of the list is counted
 * (InventoryEntriesListed) and published, the invocation's own metrics having been flushed when the stream began.
 */
async function* countedBatches(
  first: IteratorResult<readonly InventoryItem[]>,
  rest: AsyncIterator<readonly InventoryItem[]>,
): AsyncGenerator<readonly InventoryItem[]> {
  let listed = 0;
  try {
    for (let next = first; !next.done; next = await rest.next()) {
      listed += next.value.length;
      yield next.value;
    }
  } finally {
    // A stream that stopped early stops the reads too.
    await rest.return?.();
  }
  metrics.addMetric(METRIC_NAMES.inventoryEntriesListed, 'Count', listed);
  metrics.publishStoredMetrics();
}

// The list's table, paced to its share of the index's read cap, on a client that slows down when throttled.
export const handler = createHandler(
  once(() => ({
    repository: new InventoryTable({
      client: createLambdaDynamoClient({ retryMode: 'adaptive' }),
      tableName: requireEnv(ENV.inventoryTable),
      readUnitsPerSecond: intEnv(ENV.listReadUnitsPerSecond, 0),
      throttleWindowMs: THROTTLE_WINDOW_MS,
    }),
  })),
);
