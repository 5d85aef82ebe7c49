import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { IDEMPOTENCY_TABLE_KEY } from '../../service/names';
import type { TableOptions } from './dynamo-client';

/** Powertools' DynamoDB persistence layer on the service's client, with the table's key and TTL attribute. */
export function idempotencyTable(options: TableOptions): DynamoDBPersistenceLayer {
  return new DynamoDBPersistenceLayer({
    tableName: options.tableName,
    awsSdkV3Client: options.client,
    keyAttr: IDEMPOTENCY_TABLE_KEY.name,
    expiryAttr: IDEMPOTENCY_TABLE_KEY.timeToLive,
  });
}
