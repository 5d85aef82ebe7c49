import { type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, NumberValueImpl as NumberValue } from '@aws-sdk/util-dynamodb';
import { HISTORY_TABLE_KEY } from '../../service/names';
import type { HistoryEntry, HistoryRecorder } from '../inventory/history';
import type { TableOptions } from './dynamo-client';
import { translateStorageError } from './storage-errors';

/** Options of {@link HistoryTable}. */
export interface HistoryTableOptions extends TableOptions {
  /** Days a row is kept (the table's TTL attribute). @default 90 */
  retentionDays?: number;
}

/** Digits of the longest stream sequence number (DynamoDB Streams `StreamRecord.SequenceNumber`: 21 to 40). */
const SEQUENCE_DIGITS = 40;
const SECONDS_PER_DAY = 86_400;
/** The table's key attributes (service/names.ts). */
const PET_ID = HISTORY_TABLE_KEY.partition.name;
const SEQUENCE = HISTORY_TABLE_KEY.sort.name;

/**
 * The history table: partition `petId`, sort key the stream sequence number zero-padded (text order is number order).
 * A row derives from its stream record alone, so a record delivered twice is one row.
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
}

/** The sort key of a stream record's row: its sequence number, zero-padded to the longest there is. */
export function historySortKey(sequenceNumber: string): string {
  if (!/^[0-9]+$/.test(sequenceNumber) || sequenceNumber.length > SEQUENCE_DIGITS)
    throw new Error(`Not a stream sequence number: ${sequenceNumber}`);
  return sequenceNumber.padStart(SEQUENCE_DIGITS, '0');
}
