import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { type ITable, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../functions/config';
import {
  FEED_COUNTER_KEY,
  HISTORY_FEED_INDEX,
  HISTORY_STREAM_MAPPING,
  HISTORY_STREAM_VIEW,
  HISTORY_TABLE_KEY,
} from '../../service/names';
import { InventoryFunction } from './inventory-function';
import { keyAttribute, tableDefaults } from './table-defaults';

export interface InventoryHistoryProps {
  /** The inventory table, with its stream (new and old images). */
  inventoryTable: ITable;
  /** The `stage` dimension of the function's metrics. */
  stage: string;
  /** Days a history row is kept (TTL). */
  retentionDays: number;
  maxReadRequestUnits: number;
  /** Of the table, queue and log group. */
  removalPolicy: RemovalPolicy;
  deletionProtection: boolean;
  logRetention: RetentionDays;
}

/**
 * The stock change history (docs/deploying.md, "The history"). The construct IDs `Table` and `FailedRecords` must
 * never change: a new ID is a new table or queue.
 */
export class InventoryHistory extends Construct {
  readonly table: Table;
  readonly function: InventoryFunction;
  /** The shard and sequence numbers of the stream batches the mapping gave up on. */
  readonly failedRecords: Queue;

  constructor(scope: Construct, id: string, props: InventoryHistoryProps) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      ...tableDefaults(props),
      maxReadRequestUnits: props.maxReadRequestUnits,
      partitionKey: keyAttribute(HISTORY_TABLE_KEY.partition),
      sortKey: keyAttribute(HISTORY_TABLE_KEY.sort),
      timeToLiveAttribute: HISTORY_TABLE_KEY.timeToLive,
      // Each new row to the webhooks publisher (infra/constructs/webhooks.ts).
      stream: StreamViewType[HISTORY_STREAM_VIEW],
    });
    // The change feed's read path: every row in feed order under one partition (the counter row has no `feed`).
    this.table.addGlobalSecondaryIndex({
      indexName: HISTORY_FEED_INDEX.name,
      partitionKey: keyAttribute(HISTORY_FEED_INDEX.partition),
      sortKey: keyAttribute(HISTORY_FEED_INDEX.sort),
      projectionType: ProjectionType.ALL,
      maxReadRequestUnits: props.maxReadRequestUnits,
    });

    this.function = new InventoryFunction(this, 'Function', {
      handler: 'record-history',
      description: "Inventory history: records each stock change from the inventory table's stream",
      logRetention: props.logRetention,
      logRemovalPolicy: props.removalPolicy,
      wildcardAction: "dynamodb:ListStreams (Lambda's event source mapping reads the stream with it)",
      environment: {
        [ENV.historyTable]: this.table.tableName,
        [ENV.historyRetentionDays]: String(props.retentionDays),
        [ENV.stage]: props.stage,
      },
    });
    // One row per change (TransactWriteItems' puts are governed by PutItem), and the feed's counter row: read it,
    // move it; no other row is read or updated ("Using IAM with DynamoDB transactions").
    this.function.addToRolePolicy(
      new PolicyStatement({ actions: ['dynamodb:PutItem'], resources: [this.table.tableArn] }),
    );
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [FEED_COUNTER_KEY.petId] } },
      }),
    );

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
        "This queue is itself the history stream mapping's on-failure destination, read by an operator (alarmed " +
        'when not empty): nothing consumes it, so a dead-letter queue behind it would never receive anything.',
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
