import type { APIGatewayProxyEvent } from 'aws-lambda';
import { METRIC_NAMES } from '../../service/metric-names';
import { type Deps, ENV, once, requireEnv, resolveDeps } from '../config';
import { createApiHandler } from '../http/middleware';
import { jsonResponse, nextPageLink } from '../http/responses';
import { InventoryItemNotFoundError, ValidationError } from '../inventory/errors';
import { historyEntriesJson } from '../inventory/json';
import { parseLimit, refuseRepeated } from '../inventory/list-query';
import { parsePetId } from '../inventory/pet-id';
import type { InventoryRepository } from '../inventory/repository';
import { metrics } from '../observability/metrics';
import { type HistoryRow, HistoryTable, isHistoryPosition } from '../store/history-table';
import { InventoryTable } from '../store/inventory-table';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

/** Most changes one page of the history may ask for (`limit`), and how many it gets when it asks for none. */
export const MAX_HISTORY_LIMIT = 1000;
export const DEFAULT_HISTORY_LIMIT = 100;

/** Dependencies of `GET /inventory/{petId}/history`. */
export interface ListInventoryHistoryDeps {
  inventory: Pick<InventoryRepository, 'get'>;
  history: Pick<HistoryTable, 'changes'>;
}

/**
 * `GET /inventory/{petId}/history`: a page of a pet's changes, newest first, `Link` to the next; 404 without an entry.
 * The entry and the page are read at once: one round trip, and every call (the probe's too) uses both grants.
 */
export function createHandler(deps: Deps<ListInventoryHistoryDeps>) {
  const resolve = resolveDeps(deps);
  return createApiHandler(async function listInventoryHistory(event) {
    const petId = parsePetId(event.pathParameters?.petId);
    const { limit, after } = parseHistoryQuery(event);
    const { inventory, history } = resolve();
    const [item, rows] = await Promise.all([inventory.get(petId), newest(history, petId, limit + 1, after)]);
    if (!item) throw new InventoryItemNotFoundError(petId);
    // One change more than asked tells whether another page follows.
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const link: Record<string, string> =
      rows.length > limit && last
        ? { Link: nextPageLink(`/inventory/${petId}/history`, { limit, cursor: cursorOf(last.position) }) }
        : {};
    metrics.addMetric(METRIC_NAMES.inventoryHistoryListed, 'Count', page.length);
    return jsonResponse(200, historyEntriesJson(page.map((row) => row.entry)), link);
  });
}

/** Reads `limit` and `cursor` from the query string; other parameters are ignored. @throws ValidationError */
function parseHistoryQuery(event: APIGatewayProxyEvent): { limit: number; after?: string } {
  refuseRepeated(event.multiValueQueryStringParameters, ['limit', 'cursor']);
  const limit = parseLimit(event.queryStringParameters?.limit, MAX_HISTORY_LIMIT) ?? DEFAULT_HISTORY_LIMIT;
  const cursor = event.queryStringParameters?.cursor;
  return cursor === undefined ? { limit } : { limit, after: positionOf(cursor) };
}

/** At most `count` of the pet's changes past `after`, newest first. */
async function newest(
  history: ListInventoryHistoryDeps['history'],
  petId: string,
  count: number,
  after: string | undefined,
): Promise<HistoryRow[]> {
  const rows: HistoryRow[] = [];
  for await (const row of history.changes(petId, { newestFirst: true, after, pageSize: count })) {
    rows.push(row);
    if (rows.length === count) break;
  }
  return rows;
}

/** The opaque cursor of a page that starts past a row: its position, base64url (RFC 4648 §5). */
export function cursorOf(position: string): string {
  return Buffer.from(position, 'latin1').toString('base64url');
}

/** The position a cursor this API gave stands for; anything else (empty, altered) is refused. @throws ValidationError */
function positionOf(cursor: string): string {
  const position = Buffer.from(cursor, 'base64url').toString('latin1');
  if (!isHistoryPosition(position) || cursorOf(position) !== cursor)
    throw new ValidationError(
      "cursor is not one this API gave: send back the cursor of the previous page's Link as given.",
    );
  return position;
}

export const handler = createHandler(
  once(() => ({
    inventory: new InventoryTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.inventoryTable) }),
    history: new HistoryTable({ client: lambdaDynamoClient(), tableName: requireEnv(ENV.historyTable) }),
  })),
);
