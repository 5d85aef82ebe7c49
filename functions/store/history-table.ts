import { type AttributeValue, type DynamoDBClient, PutItemCommand, paginateQuery } from '@aws-sdk/client-dynamodb';
import { HISTORY_TABLE_KEY } from '../../service/names';
import type { HistoryEntry, HistoryRecorder, HistorySource } from '../inventory/history';
import { isPetStatus, type PetStatus } from '../inventory/types';
import { MalformedRowError, translateStorageError } from './storage-errors';

/** Options of {@link HistoryTable}. */
export interface HistoryTableOptions {
  client: DynamoDBClient;
  tableName: string;
  /**
   * Days a row is kept: its `expiresAt` (the table's TTL attribute) is its `at` plus this many days.
   * @default 90
   */
  retentionDays?: number;
}

/** Digits of the longest stream sequence number (DynamoDB Streams `StreamRecord.SequenceNumber`: 21 to 40). */
const SEQUENCE_DIGITS = 40;
const SECONDS_PER_DAY = 86_400;
/** The table's key attributes (service/names.ts). */
const PET_ID = HISTORY_TABLE_KEY.partition.name;
const SEQUENCE = HISTORY_TABLE_KEY.sort.name;

/**
 * The inventory history table: partition `petId` (Number, int64 exact as in the inventory table), sort key
 * `sequence` (the stream record's sequence number, zero-padded so that text order is number order), so one Query
 * reads one pet's changes in the order DynamoDB made them. A row is written with a plain PutItem of a key and
 * content derived from the stream record alone: a record delivered twice is the same row, written twice.
 */
export class HistoryTable implements HistoryRecorder {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly retentionSeconds: number;

  constructor(options: HistoryTableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.retentionSeconds = (options.retentionDays ?? 90) * SECONDS_PER_DAY;
  }

  /** Writes the row of one change; `sequenceNumber` is its stream record's. */
  async record(entry: HistoryEntry, sequenceNumber: string): Promise<void> {
    const expiresAt = Math.floor(Date.parse(entry.at) / 1000) + this.retentionSeconds;
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            [PET_ID]: { N: entry.petId },
            [SEQUENCE]: { S: historySortKey(sequenceNumber) },
            at: { S: entry.at },
            previousQuantity: entry.previousQuantity === null ? { NULL: true } : { N: String(entry.previousQuantity) },
            quantity: { N: String(entry.quantity) },
            previousStatus: entry.previousStatus === null ? { NULL: true } : { S: entry.previousStatus },
            status: { S: entry.status },
            source: { S: entry.source },
            actor: { S: entry.actor },
            ...(entry.requestId === undefined ? {} : { requestId: { S: entry.requestId } }),
            ...(entry.adjustBy === undefined ? {} : { adjustBy: { N: String(entry.adjustBy) } }),
            [HISTORY_TABLE_KEY.timeToLive]: { N: String(expiresAt) },
          },
        }),
      );
    } catch (error) {
      translateStorageError(error, 'PutItem');
    }
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
    try {
      for await (const page of pages) for (const row of page.Items ?? []) entries.push(toHistoryEntry(row));
    } catch (error) {
      return translateStorageError(error, 'Query');
    }
    return entries;
  }
}

/** The sort key of a stream record's row: its sequence number, zero-padded to the longest there is. */
export function historySortKey(sequenceNumber: string): string {
  if (!/^[0-9]+$/.test(sequenceNumber) || sequenceNumber.length > SEQUENCE_DIGITS)
    throw new Error(`Not a stream sequence number: ${sequenceNumber}`);
  return sequenceNumber.padStart(SEQUENCE_DIGITS, '0');
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
