import { setTimeout as sleep } from 'node:timers/promises';
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

export interface StreamPoller {
  /** Stops polling and waits for the current poll to finish. */
  stop(): Promise<void>;
}

interface Shard {
  id: string;
  /** Records read and not yet delivered, oldest first, and the attempts at the first batch of them. */
  pending: DynamoDBRecord[];
  attempts: number;
  parentId?: string;
  iterator?: string;
  /** The shard has no more records to give (its iterator ran out). */
  closed: boolean;
  lastRead?: string;
}

const drained = (shard: Shard | undefined) => shard === undefined || (shard.closed && shard.pending.length === 0);

/** Lambda's event source mapping on DynamoDB Local's stream ("Using Lambda with DynamoDB"): shards in order, a
 * parent before its children, a failed batch retried, then given up. */
export function startStreamPoller(options: StreamPollerOptions): StreamPoller {
  const client = new DynamoDBStreamsClient({
    endpoint: options.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 2,
  });
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const shards = new Map<string, Shard>();
  const deliver = deliverer({
    handler: options.handler,
    batchSize: options.batchSize ?? HISTORY_STREAM_MAPPING.batchSize,
    retryAttempts: options.retryAttempts ?? HISTORY_STREAM_MAPPING.retryAttempts,
    log,
  });
  const pollOnce = async () => {
    await addNewShards(client, options.streamArn, shards);
    for (const shard of shards.values()) {
      if (drained(shard) || !drained(shards.get(shard.parentId ?? ''))) continue;
      await readShard(client, options.streamArn, shard);
      await deliver(shard);
    }
  };
  const stopping = new AbortController();
  const running = (async () => {
    while (!stopping.signal.aborted) {
      await pollOnce().catch((error: Error) => log(`history: reading the stream failed: ${error.message}`));
      // Unref'd and ended by stop(): a sleep never keeps the process (or a test run) alive.
      await sleep(options.pollIntervalMs ?? 250, undefined, { signal: stopping.signal, ref: false }).catch(() => {});
    }
  })();
  return {
    stop: async () => {
      stopping.abort();
      await running;
      client.destroy();
    },
  };
}

/** A failed batch is retried whole, where Lambda resumes at the lowest failure: the history function keys each row
 * by its record's sequence number, so a row written twice is the same row and the history ends the same. */
function deliverer(options: Required<Pick<StreamPollerOptions, 'handler' | 'batchSize' | 'retryAttempts' | 'log'>>) {
  const { handler, batchSize, retryAttempts, log } = options;
  let invocation = 0;
  return async (shard: Shard) => {
    while (shard.pending.length > 0) {
      const batch = shard.pending.slice(0, batchSize);
      const context = lambdaContext({ functionName: 'record-history', requestId: `stream-${++invocation}` });
      const failure = await invokeBatch(handler, batch, context, log);
      if (failure !== undefined && ++shard.attempts <= retryAttempts) return;
      if (failure !== undefined) {
        const [first, last] = [batch[0]?.dynamodb?.SequenceNumber, batch.at(-1)?.dynamodb?.SequenceNumber];
        log(
          `history: gave up on a batch of ${batch.length} stream records (${first}..${last}) after ${shard.attempts} attempts: ${failure}`,
        );
      }
      shard.pending.splice(0, batch.length);
      shard.attempts = 0;
    }
  };
}

/** Invokes the handler with one batch: undefined when every record is done, else why it failed. */
async function invokeBatch(
  handler: StreamHandler,
  batch: DynamoDBRecord[],
  context: Context,
  log: (line: string) => void,
): Promise<string | undefined> {
  try {
    const failures = (await handler({ Records: batch }, context))?.batchItemFailures ?? [];
    return failures.length === 0 ? undefined : 'batch item failures reported';
  } catch (error) {
    log(`history: the function failed on a batch of ${batch.length}: ${(error as Error).message}`);
    return (error as Error).message;
  }
}

async function addNewShards(client: DynamoDBStreamsClient, streamArn: string, shards: Map<string, Shard>) {
  let start: string | undefined;
  do {
    const { StreamDescription } = await client.send(
      new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }),
    );
    for (const { ShardId, ParentShardId } of StreamDescription?.Shards ?? []) {
      if (ShardId && !shards.has(ShardId)) {
        shards.set(ShardId, { id: ShardId, parentId: ParentShardId, closed: false, pending: [], attempts: 0 });
      }
    }
    start = StreamDescription?.LastEvaluatedShardId;
  } while (start);
}

async function readShard(client: DynamoDBStreamsClient, streamArn: string, shard: Shard): Promise<void> {
  if (shard.closed) return;
  shard.iterator ??= (
    await client.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shard.id,
        ...(shard.lastRead
          ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: shard.lastRead }
          : { ShardIteratorType: 'TRIM_HORIZON' }),
      }),
    )
  ).ShardIterator;
  try {
    const page = await client.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: 1000 }));
    for (const record of page.Records ?? []) shard.pending.push(toLambdaRecord(record, streamArn));
    shard.lastRead = shard.pending.at(-1)?.dynamodb?.SequenceNumber ?? shard.lastRead;
    shard.iterator = page.NextShardIterator;
    shard.closed = !page.NextShardIterator;
  } catch (error) {
    // An iterator expires after 15 minutes; the next poll asks for a new one after the last record read.
    shard.iterator = undefined;
    throw error;
  }
}

// The Lambda event's record adds the stream's ARN and has the creation time in epoch seconds, not a date.
function toLambdaRecord(record: StreamsRecord, streamArn: string): DynamoDBRecord {
  const created = record.dynamodb?.ApproximateCreationDateTime;
  return {
    ...record,
    eventSourceARN: streamArn,
    dynamodb: { ...record.dynamodb, ApproximateCreationDateTime: created && Math.floor(created.getTime() / 1000) },
  } as DynamoDBRecord;
}
