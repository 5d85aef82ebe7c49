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

/** Options of {@link startStreamPoller}; batch size and retries default to the deployed mapping's. */
export interface StreamPollerOptions {
  /** The DynamoDB Local endpoint. */
  endpoint: string;
  streamArn: string;
  handler: StreamHandler;
  /** @default HISTORY_STREAM_MAPPING.batchSize */
  batchSize?: number;
  /** Retries of a failing batch before it is given up. @default HISTORY_STREAM_MAPPING.retryAttempts */
  retryAttempts?: number;
  /** @default 250 (Lambda polls each shard of a DynamoDB stream four times per second) */
  pollIntervalMs?: number;
  /** Where a failed poll or invocation and a batch given up are reported. @default a line on stderr */
  log?: (line: string) => void;
}

/** A running poller. */
export interface StreamPoller {
  /** Stops polling and waits for the current poll to finish. */
  stop(): Promise<void>;
}

interface ShardState {
  shardId: string;
  parentShardId?: string;
  iterator?: string;
  /** Read and not yet delivered, oldest first. */
  pending: DynamoDBRecord[];
  /** The shard has no more records to give (its iterator ran out). */
  closed: boolean;
  lastRead?: string;
  attempts: number;
}

type BatchOutcome = { ok: true } | { ok: false; checkpoint: number; reason: string };

/**
 * What `npm start` runs in place of Lambda's event source mapping on the inventory table's stream: it reads
 * DynamoDB Local's stream with the DynamoDB Streams API and invokes the history function with the
 * DynamoDBStreamEvent Lambda would send ("Using Lambda with DynamoDB", "Configuring partial batch response with
 * DynamoDB and Lambda"): shards in order, a parent before its children, a batch retried from the lowest reported
 * failure and given up after the retries.
 */
export function startStreamPoller(options: StreamPollerOptions): StreamPoller {
  const client = new DynamoDBStreamsClient({
    endpoint: options.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 2,
  });
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const shards = new Map<string, ShardState>();
  const finished = new Set<string>();
  const deliver = deliverer(options, log);

  const pollOnce = async () => {
    await refreshShards(client, options.streamArn, shards, finished);
    for (const shard of shards.values()) {
      if (shard.parentShardId && shards.has(shard.parentShardId)) continue;
      await readShard(client, options.streamArn, shard);
      await deliver(shard);
      if (shard.closed && shard.pending.length === 0) {
        shards.delete(shard.shardId);
        finished.add(shard.shardId);
      }
    }
  };
  const loop = repeat(async () => {
    try {
      await pollOnce();
    } catch (error) {
      log(`history: reading the stream failed: ${(error as Error).message}`);
    }
  }, options.pollIntervalMs ?? 250);
  return {
    stop: async () => {
      await loop.stop();
      client.destroy();
    },
  };
}

/** Runs `task` again and again with `intervalMs` between runs until stopped; stop() ends a pending sleep at once. */
function repeat(task: () => Promise<void>, intervalMs: number): { stop(): Promise<void> } {
  let stopped = false;
  let sleeping: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  const running = (async () => {
    while (!stopped) {
      await task();
      if (stopped) break;
      await new Promise<void>((wake) => {
        sleeping = { timer: setTimeout(wake, intervalMs), wake };
      });
      sleeping = undefined;
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      // A pending sleep timer would keep the process (and a test run) alive for up to an interval after stop.
      if (sleeping) {
        clearTimeout(sleeping.timer);
        sleeping.wake();
      }
      await running;
    },
  };
}

async function refreshShards(
  client: DynamoDBStreamsClient,
  streamArn: string,
  shards: Map<string, ShardState>,
  finished: Set<string>,
): Promise<void> {
  let start: string | undefined;
  do {
    const { StreamDescription } = await client.send(
      new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }),
    );
    for (const shard of StreamDescription?.Shards ?? []) {
      if (!shard.ShardId || shards.has(shard.ShardId) || finished.has(shard.ShardId)) continue;
      shards.set(shard.ShardId, {
        shardId: shard.ShardId,
        ...(shard.ParentShardId ? { parentShardId: shard.ParentShardId } : {}),
        pending: [],
        closed: false,
        attempts: 0,
      });
    }
    start = StreamDescription?.LastEvaluatedShardId;
  } while (start);
}

async function readShard(client: DynamoDBStreamsClient, streamArn: string, shard: ShardState): Promise<void> {
  if (shard.closed) return;
  if (!shard.iterator) {
    const { ShardIterator } = await client.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
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
    for (const record of page.Records ?? []) shard.pending.push(toLambdaRecord(record, streamArn));
    shard.lastRead = shard.pending.at(-1)?.dynamodb?.SequenceNumber ?? shard.lastRead;
    shard.iterator = page.NextShardIterator;
    if (!page.NextShardIterator) shard.closed = true;
  } catch (error) {
    // An iterator expires after 15 minutes; the next poll asks for a new one after the last record read.
    shard.iterator = undefined;
    throw error;
  }
}

/** Invokes the handler with batches of a shard's pending records until none is left or one is to be retried. */
function deliverer(options: StreamPollerOptions, log: (line: string) => void) {
  const batchSize = options.batchSize ?? HISTORY_STREAM_MAPPING.batchSize;
  const retryAttempts = options.retryAttempts ?? HISTORY_STREAM_MAPPING.retryAttempts;
  let invocation = 0;
  const invoke = (batch: DynamoDBRecord[]) => {
    const context = lambdaContext({ functionName: 'record-history', requestId: `stream-${++invocation}` });
    return invokeBatch(options.handler, batch, context, log);
  };
  return async (shard: ShardState) => {
    while (shard.pending.length > 0) {
      const batch = shard.pending.slice(0, batchSize);
      const outcome = await invoke(batch);
      if (outcome.ok) {
        shard.pending.splice(0, batch.length);
        shard.attempts = 0;
        continue;
      }
      // Records before the lowest reported failure are done; the rest of the batch is retried.
      shard.pending.splice(0, outcome.checkpoint);
      shard.attempts = outcome.checkpoint > 0 ? 1 : shard.attempts + 1;
      if (shard.attempts <= retryAttempts) return;
      const given = shard.pending.splice(0, batch.length - outcome.checkpoint);
      log(
        `history: gave up on ${given.length} stream records (${given[0]?.dynamodb?.SequenceNumber}..` +
          `${given.at(-1)?.dynamodb?.SequenceNumber}) after ${shard.attempts} attempts: ${outcome.reason}`,
      );
      shard.attempts = 0;
    }
  };
}

async function invokeBatch(
  handler: StreamHandler,
  batch: DynamoDBRecord[],
  context: Context,
  log: (line: string) => void,
): Promise<BatchOutcome> {
  let response: DynamoDBBatchResponse | undefined | null;
  try {
    response = await handler({ Records: batch }, context);
  } catch (error) {
    log(`history: the function failed on a batch of ${batch.length}: ${(error as Error).message}`);
    return { ok: false, checkpoint: 0, reason: (error as Error).message };
  }
  const failures = response?.batchItemFailures ?? [];
  if (failures.length === 0) return { ok: true };
  const positions = failures.map((failure) =>
    batch.findIndex((record) => record.dynamodb?.SequenceNumber === failure?.itemIdentifier),
  );
  // An empty, null or unknown itemIdentifier fails the whole batch.
  if (positions.some((position) => position < 0)) {
    return { ok: false, checkpoint: 0, reason: 'invalid batchItemFailures' };
  }
  return { ok: false, checkpoint: Math.min(...positions), reason: 'batch item failures reported' };
}

/** A DynamoDB Streams GetRecords record as the Lambda event carries it (creation time in epoch seconds). */
export function toLambdaRecord(record: StreamsRecord, streamArn: string): DynamoDBRecord {
  const stream = record.dynamodb ?? {};
  const created = stream.ApproximateCreationDateTime;
  type StreamImage = NonNullable<DynamoDBRecord['dynamodb']>['Keys'];
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
      Keys: stream.Keys as StreamImage,
      ...(stream.NewImage ? { NewImage: stream.NewImage as StreamImage } : {}),
      ...(stream.OldImage ? { OldImage: stream.OldImage as StreamImage } : {}),
      SequenceNumber: stream.SequenceNumber,
      SizeBytes: stream.SizeBytes,
      StreamViewType: stream.StreamViewType,
    },
  };
}
