import { Readable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { COMMON_HEADERS } from '../../service/common-headers';
import { LIST_NEAR_TIMEOUT_SHARE, METRIC_NAMES } from '../../service/metric-names';
import { type Deps, ENV, numberEnv, once, requireEnv, resolveDeps } from '../config';
import { changesLink, nextPageLink, type StreamedApiResult } from '../http/responses';
import { createStreamingApiHandler } from '../http/streaming';
import { FEED_START } from '../inventory/feed-query';
import { batchesOf, inventoryListChunks } from '../inventory/json';
import { parseListQuery } from '../inventory/list-query';
import type { InventoryRepository, ListOptions } from '../inventory/repository';
import type { InventoryItem } from '../inventory/types';
import { metrics } from '../observability/metrics';
import { HistoryTable, settledMark } from '../store/history-table';
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

/**
 * `GET /inventory`: the entries in petId order, streamed as read (the first batch before the status, so a storage
 * failure is still a 503); with `limit` (and `after`), one page read whole, with a `Link` when more follow.
 */
export function createHandler(
  deps: Deps<{ repository: Pick<InventoryRepository, 'list'>; feed: Pick<HistoryTable, 'feedPosition'> }>,
) {
  const resolve = resolveDeps(deps);
  return createStreamingApiHandler(async function listInventory(event, context) {
    const stopWatch = watchTimeBudget(context);
    try {
      const query = parseListQuery(event.queryStringParameters, event.multiValueQueryStringParameters);
      const { repository, feed } = resolve();
      // The feed's position as the list begins, read beside its first page (rel="changes").
      const began = Date.now();
      const position = feed.feedPosition();
      position.catch(() => undefined);
      const { chunks, ...answer } = await (query.limit === undefined
        ? wholeList(repository, query)
        : onePage(repository, { ...query, limit: query.limit }));
      const { sequence, at } = settledMark(await position, began);
      const changes = changesLink(sequence === 0 ? FEED_START : { sequence, at: Date.parse(at ?? '') || 0 }, 'changes');
      const link = answer.headers?.Link;
      answer.headers = { ...answer.headers, Link: link === undefined ? changes : `${link}, ${changes}` };
      return { ...answer, body: Readable.from(endingWith(chunks, stopWatch), { objectMode: false }) };
    } catch (error) {
      stopWatch();
      throw error;
    }
  });
}

/**
 * Sends InventoryListNearTimeout at once when {@link LIST_NEAR_TIMEOUT_SHARE} of the list's time is gone, so the alarm
 * sees it while the list runs (Lambda sends Duration and Errors only at the end); returns what stops the watch.
 */
function watchTimeBudget(context: Pick<Context, 'getRemainingTimeInMillis'>): () => void {
  const timer = setTimeout(() => {
    metrics.addMetric(METRIC_NAMES.inventoryListNearTimeout, 'Count', 1);
    metrics.publishStoredMetrics();
  }, context.getRemainingTimeInMillis() * LIST_NEAR_TIMEOUT_SHARE);
  return () => clearTimeout(timer);
}

/** An answer's status and headers, and its body's chunks. */
type ListAnswer = Omit<StreamedApiResult, 'body'> & { chunks: AsyncIterable<string> };

/** The chunks, then `done` once the last is handed on or the stream stops early. */
async function* endingWith(chunks: AsyncIterable<string>, done: () => void): AsyncGenerator<string> {
  try {
    yield* chunks;
  } finally {
    done();
  }
}

/** One page, read whole before it is sent; one entry more than asked tells whether another page follows. */
async function onePage(
  repository: Pick<InventoryRepository, 'list'>,
  query: ListOptions & { limit: number },
): Promise<ListAnswer> {
  const items: InventoryItem[] = [];
  for await (const batch of repository.list({ ...query, limit: query.limit + 1 })) items.push(...batch);
  const page = items.slice(0, query.limit);
  const last = page.at(-1);
  metrics.addMetric(METRIC_NAMES.inventoryEntriesListed, 'Count', page.length);
  return {
    statusCode: 200,
    headers: {
      ...COMMON_HEADERS,
      ...(items.length > query.limit && last
        ? { Link: nextPageLink('/inventory', { limit: query.limit, after: last.petId }) }
        : {}),
    },
    chunks: inventoryListChunks(batchesOf(page, ENTRIES_PER_CHUNK)),
  };
}

/** The whole list, streamed; its first batch is read first, so a list that cannot start is an Error body. */
async function wholeList(repository: Pick<InventoryRepository, 'list'>, query: ListOptions): Promise<ListAnswer> {
  const batches = repository.list(query)[Symbol.asyncIterator]();
  const first = await batches.next();
  metrics.addMetric(METRIC_NAMES.inventoryListStreamStarted, 'Count', 1);
  return {
    statusCode: 200,
    headers: { ...COMMON_HEADERS },
    chunks: inventoryListChunks(countedBatches(first, batches)),
  };
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
  once(() => {
    const client = createLambdaDynamoClient({ retryMode: 'adaptive' });
    return {
      repository: new InventoryTable({
        client,
        tableName: requireEnv(ENV.inventoryTable),
        readUnitsPerSecond: numberEnv(ENV.listReadUnitsPerSecond, 0),
        throttleWindowMs: THROTTLE_WINDOW_MS,
      }),
      feed: new HistoryTable({ client, tableName: requireEnv(ENV.historyTable) }),
    };
  }),
);
