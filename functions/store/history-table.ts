import { type AttributeValue, type DynamoDBClient, PutItemCommand, paginateQuery } from '@aws-sdk/client-dynamodb';
import { marshall, NumberValueImpl as NumberValue } from '@aws-sdk/util-dynamodb';
import { HISTORY_FEED_INDEX, HISTORY_TABLE_KEY } from '../../service/names';
import type { ChangeEvent } from '../inventory/change-event';
import type { HistoryEntry, HistoryRecorder, HistorySource } from '../inventory/history';
import { CHANGE_REASONS, type ChangeReason, isPetStatus, type PetStatus } from '../inventory/types';
import type { TableOptions } from './dynamo-client';
import { MalformedRowError, translateStorageError } from './storage-errors';

export interface HistoryTableOptions extends TableOptions {
  /** Days a row is kept (the table's TTL attribute). @default 90 */
  retentionDays?: number;
}

/** Which of one pet's changes {@link HistoryTable.changes} reads, and in what order. */
export interface HistoryQuery {
  /** Newest first; else oldest first, the order DynamoDB made them in. */
  newestFirst?: boolean;
  /** Only the changes past this {@link HistoryRow.position}, in the order read. */
  after?: string;
  /** Rows per Query: a reader that needs n asks for n, and reads no more. @default DynamoDB's 1 MB page */
  pageSize?: number;
}

/** One change as read, with its position in the pet's history (where a read after it starts). */
export interface HistoryRow {
  entry: HistoryEntry;
  position: string;
}

/** Digits of the longest stream sequence number (DynamoDB Streams `StreamRecord.SequenceNumber`: 21 to 40). */
const SEQUENCE_DIGITS = 40;
const SECONDS_PER_DAY = 86_400;
/** The table's key attributes (service/names.ts). */
const PET_ID = HISTORY_TABLE_KEY.partition.name;
const SEQUENCE = HISTORY_TABLE_KEY.sort.name;

/**
 * The history table: partition `petId`, sort key the zero-padded stream sequence number (text order is number order);
 * a row derives from its stream record alone, so a record delivered twice is one row.
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
          // The entry's members as they are (null a NULL attribute), its petId a Number of the same digits.
          Item: marshall(
            {
              ...entry,
              [PET_ID]: NumberValue.from(entry.petId),
              [SEQUENCE]: historySortKey(sequenceNumber),
              [HISTORY_TABLE_KEY.timeToLive]: expiresAt,
            },
            { removeUndefinedValues: true },
          ),
        }),
      );
    } catch (error) {
      translateStorageError(error, 'PutItem');
    }
  }

  /**
   * One pet's changes as {@link HistoryQuery} asks, page by page as the caller takes them; eventually consistent (half
   * a strong read's units), since a row lands seconds after its change anyway. A broken row is a MalformedRowError.
   */
  async *changes(petId: string, query: HistoryQuery = {}): AsyncGenerator<HistoryRow> {
    const { newestFirst = false, after, pageSize } = query;
    const pages = paginateQuery(
      { client: this.client },
      {
        TableName: this.tableName,
        KeyConditionExpression: `${PET_ID} = :petId`,
        ExpressionAttributeValues: { ':petId': { N: petId } },
        ...(after === undefined ? {} : { ExclusiveStartKey: { [PET_ID]: { N: petId }, [SEQUENCE]: { S: after } } }),
        ...(pageSize === undefined ? {} : { Limit: pageSize }),
        ScanIndexForward: !newestFirst,
      },
    );
    try {
      for await (const page of pages)
        for (const row of page.Items ?? []) yield { entry: toHistoryEntry(row), position: row[SEQUENCE]?.S ?? '' };
    } catch (error) {
      translateStorageError(error, 'Query');
    }
  }

  /**
   * Every change of one pet, oldest first; with `since` (ISO 8601 UTC), only those at or after it. Filtered here: a
   * FilterExpression would read (and cost) the same rows.
   */
  async listFor(petId: string, options: { since?: string } = {}): Promise<HistoryEntry[]> {
    const entries: HistoryEntry[] = [];
    for await (const { entry } of this.changes(petId)) if (entry.at >= (options.since ?? '')) entries.push(entry);
    return entries;
  }
}

/** Whether `text` is a row's position as {@link HistoryTable.changes} gives it (a padded sequence number). */
export function isHistoryPosition(text: string): boolean {
  return text.length === SEQUENCE_DIGITS && /^[0-9]+$/.test(text);
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
  const reason = row.reason?.S;
  const refuse = (attribute: string) =>
    new MalformedRowError('HistoryEntry', `${petId ?? '?'}/${row[SEQUENCE]?.S ?? '?'}`, attribute);
  if (petId === undefined) throw refuse('petId');
  if (at === undefined) throw refuse('at');
  if (quantity === undefined) throw refuse('quantity');
  if (!isPetStatus(status)) throw refuse('status');
  if (previousStatus !== null && !isPetStatus(previousStatus)) throw refuse('previousStatus');
  if (!isHistorySource(source)) throw refuse('source');
  if (actor === undefined) throw refuse('actor');
  if (reason !== undefined && !isChangeReason(reason)) throw refuse('reason');
  return {
    petId,
    at,
    previousQuantity: row.previousQuantity?.N === undefined ? null : Number(row.previousQuantity.N),
    quantity: Number(quantity),
    previousStatus: previousStatus as PetStatus | null,
    status,
    source,
    actor,
    ...(reason === undefined ? {} : { reason }),
    ...optionalMembers(row),
  };
}

/** Converts a stored history row of the feed (with its `feedSequence` and `version`); a broken row is a MalformedRowError. */
export function toChangeEvent(row: Record<string, AttributeValue>): ChangeEvent {
  const id = row[HISTORY_FEED_INDEX.sort.name]?.N;
  const version = row.version?.N;
  const refuse = (attribute: string) =>
    new MalformedRowError('ChangeEvent', `${row[PET_ID]?.N ?? '?'}/${row[SEQUENCE]?.S ?? '?'}`, attribute);
  if (id === undefined || !/^[1-9][0-9]*$/.test(id)) throw refuse(HISTORY_FEED_INDEX.sort.name);
  if (version === undefined || !/^[1-9][0-9]{0,14}$/.test(version)) throw refuse('version');
  return { ...toHistoryEntry(row), id, version: Number(version) };
}

/** The members of a change that may be absent (a change without them stored none), as stored. */
function optionalMembers(
  row: Record<string, AttributeValue>,
): Pick<HistoryEntry, 'requestId' | 'adjustBy' | 'reference'> {
  const { requestId, adjustBy, reference } = row;
  return {
    ...(requestId?.S === undefined ? {} : { requestId: requestId.S }),
    ...(adjustBy?.N === undefined ? {} : { adjustBy: Number(adjustBy.N) }),
    ...(reference?.S === undefined ? {} : { reference: reference.S }),
  };
}

function isHistorySource(value: unknown): value is HistorySource {
  return value === 'api' || value === 'import' || value === 'unknown';
}

function isChangeReason(value: string): value is ChangeReason {
  return (CHANGE_REASONS as readonly string[]).includes(value);
}
