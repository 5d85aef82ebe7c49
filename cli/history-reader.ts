import { type AttributeValue, type DynamoDBClient, paginateQuery } from '@aws-sdk/client-dynamodb';
import type { HistoryEntry, HistorySource } from '../functions/inventory/history';
import { isPetStatus, type PetStatus } from '../functions/inventory/types';
import { MalformedRowError } from '../functions/store/storage-errors';
import { HISTORY_TABLE_KEY } from '../service/names';

/** The history table's key attributes (service/names.ts). */
const PET_ID = HISTORY_TABLE_KEY.partition.name;
const SEQUENCE = HISTORY_TABLE_KEY.sort.name;

/** Reads the inventory history table the history function writes (functions/store/history-table.ts). */
export class HistoryReader {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;

  constructor(options: { client: DynamoDBClient; tableName: string }) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  /** One pet's changes, oldest first; with `since` (ISO 8601 UTC), only those at or after it. */
  async listFor(petId: string, options: { since?: string } = {}): Promise<HistoryEntry[]> {
    const entries: HistoryEntry[] = [];
    const pages = paginateQuery(
      { client: this.client },
      {
        TableName: this.tableName,
        KeyConditionExpression: `${PET_ID} = :petId`,
        ExpressionAttributeValues: {
          ':petId': { N: petId },
          ...(options.since === undefined ? {} : { ':since': { S: options.since } }),
        },
        ...(options.since === undefined
          ? {}
          : { FilterExpression: '#at >= :since', ExpressionAttributeNames: { '#at': 'at' } }),
        ScanIndexForward: true,
        ConsistentRead: true,
      },
    );
    for await (const page of pages) for (const row of page.Items ?? []) entries.push(toHistoryEntry(row));
    return entries;
  }
}

/** Converts a stored history row; a row that breaks the model is a {@link MalformedRowError}. */
export function toHistoryEntry(row: Record<string, AttributeValue>): HistoryEntry {
  const petId = row[PET_ID]?.N;
  const at = row.at?.S;
  const quantity = row.quantity?.N;
  const status = row.status?.S;
  const previousStatus = row.previousStatus?.S ?? null;
  const source = row.source?.S;
  const actor = row.actor?.S;
  const refuse = (attribute: string) =>
    new MalformedRowError('HistoryEntry', `${petId ?? '?'}/${row[SEQUENCE]?.S ?? '?'}`, attribute);
  if (petId === undefined) throw refuse('petId');
  if (at === undefined) throw refuse('at');
  if (quantity === undefined) throw refuse('quantity');
  if (!isPetStatus(status)) throw refuse('status');
  if (previousStatus !== null && !isPetStatus(previousStatus)) throw refuse('previousStatus');
  if (!isHistorySource(source)) throw refuse('source');
  if (actor === undefined) throw refuse('actor');
  const previousQuantity = row.previousQuantity?.N;
  const requestId = row.requestId?.S;
  const adjustBy = row.adjustBy?.N;
  return {
    petId,
    at,
    previousQuantity: previousQuantity === undefined ? null : Number(previousQuantity),
    quantity: Number(quantity),
    previousStatus: previousStatus as PetStatus | null,
    status,
    source,
    actor,
    ...(requestId === undefined ? {} : { requestId }),
    ...(adjustBy === undefined ? {} : { adjustBy: Number(adjustBy) }),
  };
}

function isHistorySource(value: unknown): value is HistorySource {
  return value === 'api' || value === 'import' || value === 'unknown';
}
