import { type Deps, ENV, numberEnv, once, requireEnv, resolveDeps } from '../config';
import { createApiHandler } from '../http/middleware';
import { changesLink, jsonResponse } from '../http/responses';
import { changeEventJson } from '../inventory/change-event';
import { type FeedCursor, parseFeedQuery } from '../inventory/feed-query';
import { HistoryTable, SETTLE_MS } from '../store/history-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

/** Dependencies of `GET /inventory/changes`. */
export interface ListInventoryChangesDeps {
  feed: Pick<HistoryTable, 'feedAfter'>;
  /** Days the history keeps a change: an older cursor is 410. */
  retentionDays: number;
  /** @default Date.now */
  clock?: () => number;
}

/**
 * `GET /inventory/changes`: the change feed, oldest first, from a cursor; the `Link` rel="next" is always there (the
 * cursor given when nothing new came), so a follower saves it and asks again.
 */
export function createHandler(deps: Deps<ListInventoryChangesDeps>) {
  const resolve = resolveDeps(deps);
  return createApiHandler(async function listInventoryChanges(event) {
    const { feed, retentionDays, clock = Date.now } = resolve();
    const { limit, cursor } = parseFeedQuery(event.queryStringParameters, event.multiValueQueryStringParameters, {
      days: retentionDays,
      now: clock(),
    });
    const events = await feed.feedAfter(cursor.sequence, limit);
    const last = events.at(-1);
    // An empty page: nothing after the cursor came before this read, so it ages from now, not from its last event.
    const next: FeedCursor = last
      ? { sequence: Number(last.id), at: Date.parse(last.at) }
      : cursor.sequence === 0
        ? cursor
        : { sequence: cursor.sequence, at: Math.max(cursor.at ?? 0, clock() - SETTLE_MS) };
    return jsonResponse(200, `{"items":[${events.map(changeEventJson).join(',')}]}`, {
      Link: changesLink(next, 'next'),
    });
  });
}

export const handler = createHandler(
  once(() => ({
    feed: new HistoryTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.historyTable) }),
    retentionDays: numberEnv(ENV.historyRetentionDays, 90),
  })),
);
