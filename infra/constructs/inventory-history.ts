import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../functions/config';
import { HISTORY_STREAM_MAPPING, HISTORY_TABLE_KEY } from '../../service/names';
import { InventoryFunction } from './inventory-function';
import { attributeType, tableDefaults } from './table-defaults';

/** The history function's module under `functions/handlers/`. */
export const HISTORY_HANDLER = 'record-history';

/** The history function writes one row per change, nothing else: not even a read. */
export const HISTORY_TABLE_ACTIONS: readonly string[] = ['dynamodb:PutItem'];

/** Properties of an {@link InventoryHistory}. */
export interface InventoryHistoryProps {
  /** The inventory table, with its stream (new and old images). */
  inventoryTable: ITable;
  /** Stage name, the `stage` dimension of the function's metrics. */
  stage: string;
  /** Days a history row is kept (TTL). */
  retentionDays: number;
  /** Most read request units per second the history table may consume. */
  maxReadRequestUnits: number;
  /** What happens to the table, queue and log group when the stack is deleted. */
  removalPolicy: RemovalPolicy;
  deletionProtection: boolean;
  logRetention: RetentionDays;
  /** Powertools log level. @default 'INFO' */
  logLevel?: string;
}

/**
 * The stock change history: the inventory table's stream feeds the history function (through its `live` alias,
 * like every other function, so a deploy shifts it with CodeDeploy and can roll it back), which writes one row per
 * change into the history table. The event source mapping reads each shard in order, lets the function report the
 * records it failed (`ReportBatchItemFailures`), bisects a failing batch, retries a bounded number of times and
 * sends what it gives up on to an encrypted SQS queue, which an alarm watches (infra/constructs/monitoring.ts).
 *
 * Construct IDs of the table (`Table`) and queue (`FailedRecords`) must never change: a new ID is a new resource.
 */
export class InventoryHistory extends Construct {
  readonly table: Table;
  readonly function: InventoryFunction;
  /** The on-failure destination: metadata of the stream batches the mapping gave up on. */
  readonly failedRecords: Queue;

  constructor(scope: Construct, id: string, props: InventoryHistoryProps) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      ...tableDefaults(props),
      maxReadRequestUnits: props.maxReadRequestUnits,
      partitionKey: { name: HISTORY_TABLE_KEY.partition.name, type: attributeType(HISTORY_TABLE_KEY.partition.type) },
      sortKey: { name: HISTORY_TABLE_KEY.sort.name, type: attributeType(HISTORY_TABLE_KEY.sort.type) },
      timeToLiveAttribute: HISTORY_TABLE_KEY.timeToLive,
    });

    this.function = new InventoryFunction(this, 'Function', {
      handler: HISTORY_HANDLER,
      description: "Inventory history: records each stock change from the inventory table's stream",
      logRetention: props.logRetention,
      logRemovalPolicy: props.removalPolicy,
      ...(props.logLevel ? { logLevel: props.logLevel } : {}),
      wildcardActions: {
        actions: ['dynamodb:ListStreams'],
        why: "which Lambda's event source mapping needs to read the stream",
      },
      environment: {
        [ENV.historyTable]: this.table.tableName,
        [ENV.historyRetentionDays]: String(props.retentionDays),
        [ENV.stage]: props.stage,
      },
    });
    this.table.grant(this.function, ...HISTORY_TABLE_ACTIONS);

    this.failedRecords = new Queue(this, 'FailedRecords', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // SQS's longest: the message outlives the stream's 24 hours, so even a late look tells which changes are missing.
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.failedRecords).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is itself a dead-letter destination: the history stream mapping's on-failure destination, holding " +
        'the shard and sequence numbers of batches it gave up on for an operator (alarmed when not empty). Nothing ' +
        'consumes it automatically, so a dead-letter queue behind it would never receive anything.',
    });

    this.function.live.addEventSource(
      new DynamoEventSource(props.inventoryTable, {
        // TRIM_HORIZON: the first deploy records every change the stream still holds, none is skipped.
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: HISTORY_STREAM_MAPPING.batchSize,
        bisectBatchOnError: HISTORY_STREAM_MAPPING.bisectBatchOnError,
        retryAttempts: HISTORY_STREAM_MAPPING.retryAttempts,
        maxRecordAge: Duration.seconds(HISTORY_STREAM_MAPPING.maxRecordAgeSeconds),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.failedRecords),
      }),
    );
  }
}
