import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { IDEMPOTENCY_TABLE_KEY } from '../../service/names';

/** Options of {@link idempotencyTable}. */
export interface IdempotencyTableOptions {
  client: DynamoDBClient;
  tableName: string;
}

/** Powertools' DynamoDB persistence layer on the service's client, with the table's key and TTL attribute. */
export function idempotencyTable(options: IdempotencyTableOptions): DynamoDBPersistenceLayer {
  return new DynamoDBPersistenceLayer({
    tableName: options.tableName,
    awsSdkV3Client: options.client,
    keyAttr: IDEMPOTENCY_TABLE_KEY.name,
    expiryAttr: IDEMPOTENCY_TABLE_KEY.timeToLive,
  });
}
