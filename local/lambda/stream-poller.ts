import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamsRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { HISTORY_STREAM_MAPPING } from '../../service/names';
import { lambdaContext } from './events';

/** A stream-triggered function, as the event source mapping invokes it. */
export type StreamHandler = (
  event: DynamoDBStreamEvent,
  context: Context,
) => Promise<DynamoDBBatchResponse | undefined | null>;

/** A batch the poller gave up on: what the deployed mapping sends to its on-failure destination. */
export interface DiscardedBatch {
  shardId: string;
  firstSequenceNumber: string;
  lastSequenceNumber: string;
  size: number;
  attempts: number;
  reason: string;
}

/**
 * Options of {@link startStreamPoller}: the event source mapping's settings, each defaulting to the deployed
 * mapping's (`HISTORY_STREAM_MAPPING`, service/names.ts), so `npm start` runs the history as the stage does.
 */
export interface StreamPollerOptions {
  /** The DynamoDB Local endpoint. */
  endpoint: string;
  streamArn: string;
  handler: StreamHandler;
  /** @default HISTORY_STREAM_MAPPING.batchSize */
  batchSize?: number;
  /** Retries of a failing batch before it is discarded. @default HISTORY_STREAM_MAPPING.retryAttempts */
  retryAttempts?: number;
  /** Split a batch whose invocation failed in two before retrying it. @default HISTORY_STREAM_MAPPING.bisectBatchOnError */
  bisectBatchOnError?: boolean;
  /**
   * Records older than this (from their `ApproximateCreationDateTime`) are discarded, not delivered.
   * @default HISTORY_STREAM_MAPPING.maxRecordAgeSeconds
   */
  maxRecordAgeSeconds?: number;
  /** Milliseconds since the epoch, for the record age. @default Date.now */
  now?: () => number;
  /** @default 250 (Lambda polls each shard of a DynamoDB stream four times per second) */
  pollIntervalMs?: number;
  /** Where a discarded batch is reported (the deployed stack: an SQS queue). @default a line on stderr */
  onDiscard?: (batch: DiscardedBatch) => void;
  /** Where a failed poll or invocation is reported. @default a line on stderr */
  log?: (line: string) => void;
}

/** A running poller. */
export interface StreamPoller {
  /** Batches given up on so far. */
  readonly discarded: readonly DiscardedBatch[];
  /** Stops polling and waits for the current poll to finish. */
  stop(): Promise<void>;
}

interface ShardState {
  shardId: string;
  parentShardId?: string;
  iterator?: string;
  /** Read and not yet checkpointed, oldest first. */
  pending: DynamoDBRecord[];
  /** The shard has no more records to give (its iterator ran out). */
  closed: boolean;
  lastRead?: string;
  attempts: number;
  /** Records in the next batch: halved by bisection, reset by a success. */
  limit: number;
}

/**
 * What `npm start` runs in place of Lambda's event source mapping on the inventory table's stream: it reads
 * DynamoDB Local's stream with the DynamoDB Streams API and invokes the history function with the
 * DynamoDBStreamEvent Lambda would send, following the mapping's documented semantics ("Using Lambda with DynamoDB",
 * "Configuring partial batch response with DynamoDB and Lambda"): shards in order, a parent before its children,
 * a batch retried from the lowest reported failure, bisected on error, and discarded after the retries or once its
 * records are older than the maximum record age.
 */
export function startStreamPoller(options: StreamPollerOptions): StreamPoller {
  const client = new DynamoDBStreamsClient({
    endpoint: options.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 2,
  });
  const batchSize = options.batchSize ?? HISTORY_STREAM_MAPPING.batchSize;
  const retryAttempts = options.retryAttempts ?? HISTORY_STREAM_MAPPING.retryAttempts;
  const bisect = options.bisectBatchOnError ?? HISTORY_STREAM_MAPPING.bisectBatchOnError;
  const maxRecordAgeSeconds = options.maxRecordAgeSeconds ?? HISTORY_STREAM_MAPPING.maxRecordAgeSeconds;
  const now = options.now ?? Date.now;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const discarded: DiscardedBatch[] = [];
  const onDiscard =
    options.onDiscard ??
    ((batch: DiscardedBatch) =>
      log(
        `history: gave up on ${batch.size} stream records (${batch.firstSequenceNumber}..${batch.lastSequenceNumber}) ` +
          `after ${batch.attempts} attempts: ${batch.reason}`,
      ));
  const shards = new Map<string, ShardState>();
  const finished = new Set<string>();
  let invocation = 0;

  const refreshShards = async () => {
    let start: string | undefined;
    do {
      const { StreamDescription } = await client.send(
        new DescribeStreamCommand({ StreamArn: options.streamArn, ExclusiveStartShardId: start }),
      );
      for (const shard of StreamDescription?.Shards ?? []) {
        if (!shard.ShardId || shards.has(shard.ShardId) || finished.has(shard.ShardId)) continue;
        shards.set(shard.ShardId, {
          shardId: shard.ShardId,
          ...(shard.ParentShardId ? { parentShardId: shard.ParentShardId } : {}),
          pending: [],
          closed: false,
          attempts: 0,
          limit: batchSize,
        });
      }
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
  };

  const read = async (shard: ShardState) => {
    if (shard.closed) return;
    if (!shard.iterator) {
      const { ShardIterator } = await client.send(
        new GetShardIteratorCommand({
          StreamArn: options.streamArn,
          ShardId: shard.shardId,
          ...(shard.lastRead
            ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: shard.lastRead }
            : { ShardIteratorType: 'TRIM_HORIZON' }),
        }),
      );
      shard.iterator = ShardIterator;
    }
    try {
      const page = await client.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: 1000 }));
      for (const record of page.Records ?? []) shard.pending.push(toLambdaRecord(record, options.streamArn));
      shard.lastRead = shard.pending.at(-1)?.dynamodb?.SequenceNumber ?? shard.lastRead;
      shard.iterator = page.NextShardIterator;
      if (!page.NextShardIterator) shard.closed = true;
    } catch (error) {
      // An iterator expires after 15 minutes; the next poll asks for a new one after the last record read.
      shard.iterator = undefined;
      throw error;
    }
  };

  const discard = (shard: ShardState, records: DynamoDBRecord[], reason: string) => {
    const record: DiscardedBatch = {
      shardId: shard.shardId,
      firstSequenceNumber: records[0]?.dynamodb?.SequenceNumber ?? '',
      lastSequenceNumber: records.at(-1)?.dynamodb?.SequenceNumber ?? '',
      size: records.length,
      attempts: shard.attempts,
      reason,
    };
    discarded.push(record);
    onDiscard(record);
    shard.pending.splice(0, records.length);
    shard.attempts = 0;
    shard.limit = batchSize;
  };

  /** Whether a record is past the mapping's age limit (records are in stream order: the oldest come first). */
  const tooOld = (record: DynamoDBRecord) => {
    const created = record.dynamodb?.ApproximateCreationDateTime;
    return created !== undefined && now() / 1000 - created > maxRecordAgeSeconds;
  };

  /** Invokes the handler with batches of the shard's pending records until none is left or one fails. */
  const deliver = async (shard: ShardState) => {
    while (shard.pending.length > 0) {
      const expired = shard.pending.findIndex((record) => !tooOld(record));
      if (expired !== 0) {
        discard(
          shard,
          shard.pending.slice(0, expired < 0 ? shard.pending.length : expired),
          'older than the maximum record age',
        );
        continue;
      }
      const batch = shard.pending.slice(0, shard.limit);
      const outcome = await invoke(batch);
      if (outcome.ok) {
        shard.pending.splice(0, batch.length);
        shard.attempts = 0;
        shard.limit = batchSize;
        continue;
      }
      // Records before the lowest reported failure are done; the rest of the batch is retried.
      shard.pending.splice(0, outcome.checkpoint);
      const retried = batch.slice(outcome.checkpoint);
      if (outcome.checkpoint > 0) shard.attempts = 0;
      shard.attempts++;
      if (shard.attempts > retryAttempts) {
        discard(shard, retried, outcome.reason);
        continue;
      }
      if (bisect && outcome.threw) shard.limit = Math.max(1, Math.ceil(retried.length / 2));
      else if (bisect) shard.limit = retried.length;
      return;
    }
  };

  const invoke = async (
    batch: DynamoDBRecord[],
  ): Promise<{ ok: true } | { ok: false; checkpoint: number; threw: boolean; reason: string }> => {
    let response: DynamoDBBatchResponse | undefined | null;
    try {
      const requestId = `stream-${++invocation}`;
      response = await options.handler(
        { Records: batch },
        lambdaContext({ functionName: 'record-history', requestId }),
      );
    } catch (error) {
      log(`history: the function failed on a batch of ${batch.length}: ${(error as Error).message}`);
      return { ok: false, checkpoint: 0, threw: true, reason: (error as Error).message };
    }
    const failures = response?.batchItemFailures ?? [];
    if (failures.length === 0) return { ok: true };
    const positions = failures.map((failure) =>
      batch.findIndex((record) => record.dynamodb?.SequenceNumber === failure?.itemIdentifier),
    );
    // An empty, null or unknown itemIdentifier fails the whole batch.
    if (positions.some((position) => position < 0))
      return { ok: false, checkpoint: 0, threw: false, reason: 'invalid batchItemFailures' };
    return { ok: false, checkpoint: Math.min(...positions), threw: false, reason: 'batch item failures reported' };
  };

  const pollOnce = async () => {
    await refreshShards();
    for (const shard of shards.values()) {
      if (shard.parentShardId && shards.has(shard.parentShardId)) continue;
      await read(shard);
      await deliver(shard);
      if (shard.closed && shard.pending.length === 0) {
        shards.delete(shard.shardId);
        finished.add(shard.shardId);
      }
    }
  };

  let stopped = false;
  /** The loop's sleep between polls, while it sleeps: stop() ends it at once and clears its timer. */
  let sleeping: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  const loop = (async () => {
    const interval = options.pollIntervalMs ?? 250;
    while (!stopped) {
      try {
        await pollOnce();
      } catch (error) {
        log(`history: reading the stream failed: ${(error as Error).message}`);
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        sleeping = { timer: setTimeout(resolve, interval), wake: resolve };
      });
      sleeping = undefined;
    }
  })();

  return {
    discarded,
    stop: async () => {
      stopped = true;
      // A pending sleep timer would keep the process (and a test run) alive for up to an interval after stop.
      if (sleeping) {
        clearTimeout(sleeping.timer);
        sleeping.wake();
      }
      await loop;
      client.destroy();
    },
  };
}

/** A DynamoDB Streams GetRecords record as the Lambda event carries it (creation time in epoch seconds). */
export function toLambdaRecord(record: StreamsRecord, streamArn: string): DynamoDBRecord {
  const stream = record.dynamodb ?? {};
  const created = stream.ApproximateCreationDateTime;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: record.eventSource ?? 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(created ? { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) } : {}),
      // The Streams API and the Lambda event carry the same attribute-value JSON.
      Keys: stream.Keys as NonNullable<DynamoDBRecord['dynamodb']>['Keys'],
      ...(stream.NewImage ? { NewImage: stream.NewImage as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'] } : {}),
      ...(stream.OldImage ? { OldImage: stream.OldImage as NonNullable<DynamoDBRecord['dynamodb']>['OldImage'] } : {}),
      SequenceNumber: stream.SequenceNumber,
      SizeBytes: stream.SizeBytes,
      StreamViewType: stream.StreamViewType,
    },
  };
}
