import { startDynamoDbLocal } from '../../local/dynamodb-local';

/** Starts one DynamoDB Local (in memory, free port) for every integration test file; each file uses its own tables. */
export default async function globalSetup(): Promise<void> {
  const dynamo = await startDynamoDbLocal();
  process.env.TEST_DYNAMODB_ENDPOINT = dynamo.endpoint;
  (globalThis as { __DYNAMODB_LOCAL__?: typeof dynamo }).__DYNAMODB_LOCAL__ = dynamo;
}
