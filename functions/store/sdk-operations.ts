import {
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { DynamoOperations } from './dynamo-operations';

/**
 * The table adapters' operations over an AWS SDK `DynamoDBClient`: what the operator CLI, the local tooling and
 * the tests pass. The Lambda functions use the lean client instead (`lean-dynamodb.ts`), which keeps this module
 * and the SDK out of their bundles.
 */
export function sdkOperations(client: DynamoDBClient): DynamoOperations {
  return {
    deleteItem: (input) => client.send(new DeleteItemCommand(input)),
    getItem: (input) => client.send(new GetItemCommand(input)),
    putItem: (input) => client.send(new PutItemCommand(input)),
    scan: (input) => client.send(new ScanCommand(input)),
    updateItem: (input) => client.send(new UpdateItemCommand(input)),
  };
}

/** An SDK client wrapped by {@link sdkOperations}; anything else (the lean client) as it is. */
export function asDynamoOperations(client: DynamoDBClient | DynamoOperations): DynamoOperations {
  return client instanceof DynamoDBClient ? sdkOperations(client) : client;
}
