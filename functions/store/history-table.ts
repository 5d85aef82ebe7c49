import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  paginateQuery,
  QueryCommand,
  type QueryCommandOutput,
  type TransactWriteItem,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, NumberValueImpl as NumberValue } from '@aws-sdk/util-dynamodb';
import { FEED_COUNTER_KEY, FEED_PARTITION, HISTORY_FEED_INDEX, HISTORY_TABLE_KEY } from '../../service/names';
import type { ChangeEvent } from '../inventory/change-event';
import {
  type HistoryEntry,
  type HistoryRecorder,
  type HistorySource,
  IncompleteHistoryError,
  type StreamChange,
} from '../inventory/history';
import { batchesOf } from '../inventory/json';
import { CHANGE_REASONS, type ChangeReason, isPetStatus, type PetStatus } from '../inventory/types';
import { backoffDelayMs } from './backoff';
import type { TableOptions } from './dynamo-client';
import { cancellationReasons, MalformedRowError, translateStorageError } from './storage-errors';

export interface HistoryTableOptions extends TableOptions {
  /** Days a row is kept (the table's TTL attribute). @default 90 */
  retentionDays?: number;
  /** The time a change takes its place in the feed (epoch ms). @default Date.now */
  clock?: () => number;
}

/** A place in the feed: a sequence number (0 before the first) and the time it was given (ISO 8601 UTC). */
export interface FeedMark {
  sequence: number;
  at?: string;
}

/**
 * Where the feed stands (its last mark), with two older marks the counter keeps for the list: `settled`, the newest
 * known to be {@link SETTLE_MS} old, and `pending`, the next to become it.
 */
export interface FeedPosition extends FeedMark {
  pending?: FeedMark;
  settled?: FeedMark;
}

/**
 * How old a feed position must be before the list names it: the list's index is eventually consistent, so a change
 * numbered moments before the list began may not show in it yet; from an older position the feed brings it again.
 */
export const SETTLE_MS = 5_000;

/** The newest of a position's marks at least {@link SETTLE_MS} old at `now`: where a list started then may follow. */
export function settledMark(position: FeedPosition, now: number): FeedMark {
  const old = (mark: FeedMark | undefined) => mark !== undefined && (Date.parse(mark.at ?? '') || 0) <= now - SETTLE_MS;
  // An idle feed's head is as current as the read: no event after it can come with an earlier time.
  if (old(position)) return { sequence: position.sequence, at: new Date(now - SETTLE_MS).toISOString() };
  if (old(position.pending)) return position.pending as FeedMark;
  return position.settled ?? { sequence: 0 };
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

/** A transaction's 100 actions: the counter and 99 rows. */
const ROWS_PER_TRANSACTION = 99;
/** Attempts at one transaction that lost the counter to other shards' batches before the batch is retried whole. */
const MAX_SEQUENCE_ATTEMPTS = 12;
/** The counter row's attributes: the last sequence number given, and its time. */
const COUNTER_LAST = 'last';
/** A row's place in the feed (the feed index's sort key). */
const FEED_SEQUENCE = HISTORY_FEED_INDEX.sort.name;
const COUNTER_LAST_AT = 'lastAt';
/** The counter's older marks (FeedPosition), each a Map of `sequence` and `at`. */
const COUNTER_PENDING = 'pending';
const COUNTER_SETTLED = 'settled';

/**
 * The counter's older marks after a write at `now`: `pending` becomes `settled` once it is {@link SETTLE_MS} old and
 * the last mark before this write takes its place, so under steady writes `settled` is 5 to 10 seconds behind.
 */
function marksAfter(position: FeedPosition, now: number): Record<':pending' | ':settled', AttributeValue> {
  const head = { sequence: position.sequence, at: position.at };
  const pending = position.pending ?? head;
  const promote = (Date.parse(pending.at ?? '') || 0) <= now - SETTLE_MS;
  const settled = promote ? pending : (position.settled ?? { sequence: 0 });
  return {
    ':pending': { M: marshall(promote ? head : pending, { removeUndefinedValues: true }) },
    ':settled': { M: marshall(settled, { removeUndefinedValues: true }) },
  };
}

/** The counter row's key (service/names.ts). */
function feedCounterKey(): Record<string, AttributeValue> {
  return { [PET_ID]: { N: FEED_COUNTER_KEY.petId }, [SEQUENCE]: { S: FEED_COUNTER_KEY.sequence } };
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
  private readonly clock: () => number;

  constructor(options: HistoryTableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.retentionSeconds = (options.retentionDays ?? 90) * SECONDS_PER_DAY;
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Records the changes in the order given, at most 99 to a transaction with the feed's counter: each row gets the next
   * `feedSequence` and the time it took it, never before the last one's, so the feed's order and times agree. A lost
   * race for the counter (another shard's batch) goes again after a jittered back-off; a row already there (a record
   * delivered twice) keeps its place and is left out.
   */
  async record(changes: readonly StreamChange[]): Promise<void> {
    let recorded = 0;
    try {
      for (const chunk of batchesOf(changes, ROWS_PER_TRANSACTION)) {
        await this.sequence(chunk);
        recorded += chunk.length;
      }
    } catch (error) {
      throw new IncompleteHistoryError(recorded, { cause: error });
    }
  }

  /** The feed's position: the last sequence number given (0 before the first) and its time. Strongly consistent. */
  async feedPosition(): Promise<FeedPosition> {
    try {
      const { Item } = await this.client.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: feedCounterKey(),
          ConsistentRead: true,
        }),
      );
      const mark = (attribute: AttributeValue | undefined): FeedMark | undefined =>
        attribute?.M === undefined
          ? undefined
          : { sequence: Number(attribute.M.sequence?.N ?? 0), at: attribute.M.at?.S };
      return {
        sequence: Number(Item?.[COUNTER_LAST]?.N ?? 0),
        at: Item?.[COUNTER_LAST_AT]?.S,
        pending: mark(Item?.[COUNTER_PENDING]),
        settled: mark(Item?.[COUNTER_SETTLED]),
      };
    } catch (error) {
      return translateStorageError(error, 'GetItem');
    }
  }

  /**
   * Up to `limit` events after feed sequence number `after` (0: from the oldest kept), oldest first: only the run of
   * numbers right after it, up to the first gap. The index is eventually consistent and a transaction's rows may show there one by one, so a gap
   * is a row not visible yet (the counter and its rows commit together), which a later read finds; never skipped.
   */
  async feedAfter(after: number, limit: number): Promise<ChangeEvent[]> {
    let page: QueryCommandOutput;
    try {
      page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: HISTORY_FEED_INDEX.name,
          KeyConditionExpression: '#feed = :feed AND #sequence > :after',
          ExpressionAttributeNames: { '#feed': HISTORY_FEED_INDEX.partition.name, '#sequence': FEED_SEQUENCE },
          ExpressionAttributeValues: { ':feed': { N: FEED_PARTITION }, ':after': { N: String(after) } },
          Limit: limit,
        }),
      );
    } catch (error) {
      return translateStorageError(error, 'Query');
    }
    const events: ChangeEvent[] = [];
    // From the start (0), the first row is the oldest kept once it is 1 or settled (older ones expired); a newer one
    // may be a later row of a transaction whose first is not showing yet.
    let next = after;
    const settled = this.clock() - SETTLE_MS;
    for (const row of page.Items ?? []) {
      const event = toChangeEvent(row);
      const first = next === 0 && (event.id === '1' || Date.parse(event.at) <= settled);
      if (!first && Number(event.id) !== next + 1) break;
      events.push(event);
      next = Number(event.id);
    }
    return events;
  }

  /** One transaction of the counter and a chunk's rows, again until it lands or every row is found recorded. */
  private async sequence(chunk: readonly StreamChange[]): Promise<void> {
    let pending = chunk;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const position = await this.feedPosition();
      const at = new Date(Math.max(this.clock(), Date.parse(position.at ?? '') || 0)).toISOString();
      try {
        await this.client.send(
          new TransactWriteItemsCommand({ TransactItems: this.feedWrites(pending, position, at) }),
        );
        return;
      } catch (error) {
        const reasons = cancellationReasons(error);
        if (reasons === undefined || attempt >= MAX_SEQUENCE_ATTEMPTS)
          translateStorageError(error, 'TransactWriteItems');
        const recorded = pending.filter((_, index) => reasons[index + 1]?.Code === 'ConditionalCheckFailed');
        const lost = reasons.some(
          (reason, index) =>
            reason.Code === 'TransactionConflict' || (index === 0 && reason.Code === 'ConditionalCheckFailed'),
        );
        if (recorded.length === 0 && !lost) translateStorageError(error, 'TransactWriteItems');
        pending = pending.filter((change) => !recorded.includes(change));
        if (lost) await sleep(backoffDelayMs(attempt, 10, 1000));
      }
    }
  }

  /** The counter's move and each change's row, numbered after `position`; a change with no version gets no number. */
  private feedWrites(changes: readonly StreamChange[], position: FeedPosition, at: string): TransactWriteItem[] {
    let last = position.sequence;
    const rows = changes.map(({ entry, sequenceNumber, version }): TransactWriteItem => {
      const feed =
        version === undefined
          ? {}
          : { [HISTORY_FEED_INDEX.partition.name]: Number(FEED_PARTITION), [FEED_SEQUENCE]: ++last, version };
      return {
        Put: {
          TableName: this.tableName,
          // The entry's members as they are (null a NULL attribute), its petId a Number of the same digits.
          Item: marshall(
            {
              ...entry,
              ...feed,
              at,
              [PET_ID]: NumberValue.from(entry.petId),
              [SEQUENCE]: historySortKey(sequenceNumber),
              [HISTORY_TABLE_KEY.timeToLive]: Math.floor(Date.parse(at) / 1000) + this.retentionSeconds,
            },
            { removeUndefinedValues: true },
          ),
          ConditionExpression: 'attribute_not_exists(#sequence)',
          ExpressionAttributeNames: { '#sequence': SEQUENCE },
        },
      };
    });
    const counter: TransactWriteItem = {
      Update: {
        TableName: this.tableName,
        Key: feedCounterKey(),
        UpdateExpression: 'SET #last = :last, #lastAt = :at, #pending = :pending, #settled = :settled',
        ConditionExpression: `${position.sequence === 0 ? 'attribute_not_exists(#last) OR ' : ''}#last = :previous`,
        ExpressionAttributeNames: {
          '#last': COUNTER_LAST,
          '#lastAt': COUNTER_LAST_AT,
          '#pending': COUNTER_PENDING,
          '#settled': COUNTER_SETTLED,
        },
        ExpressionAttributeValues: {
          ':last': { N: String(last) },
          ':at': { S: at },
          ':previous': { N: String(position.sequence) },
          ...marksAfter(position, Date.parse(at)),
        },
      },
    };
    return [counter, ...rows];
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
  const id = row[FEED_SEQUENCE]?.N;
  const version = row.version?.N;
  const refuse = (attribute: string) =>
    new MalformedRowError('ChangeEvent', `${row[PET_ID]?.N ?? '?'}/${row[SEQUENCE]?.S ?? '?'}`, attribute);
  if (id === undefined || !/^[1-9][0-9]*$/.test(id)) throw refuse(FEED_SEQUENCE);
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
