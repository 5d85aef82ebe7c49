import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { METRIC_NAMES } from '../../service/metric-names';
import { type Deps, ENV, numberEnv, once, requireEnv, resolveDeps } from '../config';
import {
  type EntryWrite,
  type HistoryRecorder,
  historyEntryFor,
  IncompleteHistoryError,
  type StoredEntry,
  type StreamChange,
} from '../inventory/history';
import { observed } from '../observability/chain';
import { logger } from '../observability/logger';
import { metrics } from '../observability/metrics';
import { annotateTrace } from '../observability/tracer';
import { HistoryTable } from '../store/history-table';
import { toChangeOrigin, toInventoryItem } from '../store/inventory-row';
import { lambdaDynamoClient } from '../store/lambda-dynamo-client';

/**
 * The history function: the changes of quantity or status in a batch of the table's stream, recorded in stream order
 * with their places in the feed. A record it cannot read, and every change from the first it could not record on, are
 * batch item failures, which the event source mapping retries from the lowest.
 */
export function createHandler(deps: Deps<{ history: HistoryRecorder }>) {
  const resolve = resolveDeps(deps);
  return observed(middy<DynamoDBStreamEvent, DynamoDBBatchResponse>()).handler(async function recordHistory(event) {
    const { history } = resolve();
    const changes: StreamChange[] = [];
    const failed: string[] = [];
    for (const record of event.Records) {
      const sequenceNumber = record.dynamodb?.SequenceNumber ?? '';
      try {
        if (sequenceNumber === '') throw new Error(`Stream record ${record.eventID} has no sequence number`);
        const write = entryWriteOf(record);
        const entry = historyEntryFor(write);
        if (entry) changes.push({ entry, sequenceNumber, ...versionOf(write.after) });
      } catch (error) {
        logger.error('stream record not recorded', { eventID: record.eventID, sequenceNumber, error: error as Error });
        failed.push(sequenceNumber);
      }
    }
    let recorded = changes.length;
    await history.record(changes).catch((error: unknown) => {
      if (!(error instanceof IncompleteHistoryError)) throw error;
      recorded = error.recorded;
      logger.error('stream records not recorded', { first: changes[recorded]?.sequenceNumber, error });
      failed.push(...changes.slice(recorded).map((change) => change.sequenceNumber));
    });
    const batchItemFailures = failed.map((itemIdentifier) => ({ itemIdentifier }));
    metrics.addMetric(METRIC_NAMES.historyEntriesRecorded, 'Count', recorded);
    metrics.addMetric(METRIC_NAMES.historyRecordsFailed, 'Count', batchItemFailures.length);
    annotateTrace({ route: 'inventory stream', outcome: batchItemFailures.length === 0 ? 'recorded' : 'partial' });
    return { batchItemFailures };
  });
}

/** The entry's version after the change, where its writer counts one. */
function versionOf(after: StoredEntry | undefined): { version?: number } {
  return after?.version === undefined ? {} : { version: after.version };
}

/** The entry before and after the write a stream record reports (its images are the table's attribute maps). */
export function entryWriteOf(record: DynamoDBRecord): EntryWrite {
  const recordedAt = recordTimeOf(record);
  const stored = (image: Record<string, unknown> | undefined): StoredEntry | undefined => {
    if (image === undefined) return undefined;
    const row = image as Record<string, AttributeValue>;
    const origin = toChangeOrigin(row);
    return { ...toInventoryItem(row), ...(origin ? { origin } : {}) };
  };
  return { before: stored(record.dynamodb?.OldImage), after: stored(record.dynamodb?.NewImage), recordedAt };
}

/**
 * When the record was written: epoch seconds from Lambda, an ISO date from a replay with `aws dynamodbstreams
 * get-records` (docs/deploying.md); anything else takes the time of processing, logged.
 */
function recordTimeOf(record: DynamoDBRecord): string {
  const created: unknown = record.dynamodb?.ApproximateCreationDateTime;
  const date = new Date(
    typeof created === 'number' ? created * 1000 : typeof created === 'string' ? created : Number.NaN,
  );
  // An Invalid Date also stands for a time outside the range a Date holds.
  if (!Number.isNaN(date.getTime())) return date.toISOString();
  logger.warn('stream record time unreadable: using the time of processing', {
    eventID: record.eventID,
    approximateCreationDateTime: created === undefined ? 'missing' : String(created),
  });
  return new Date().toISOString();
}

export const handler = createHandler(
  once(() => ({
    history: new HistoryTable({
      client: lambdaDynamoClient(),
      tableName: requireEnv(ENV.historyTable),
      retentionDays: numberEnv(ENV.historyRetentionDays, 90),
    }),
  })),
);
