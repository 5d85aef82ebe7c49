import { type DynamoDbLocalOptions, startDynamoDbLocal } from '../../local/dynamodb-local';

/** Starts one DynamoDB Local (in memory, free port) for every test file of the run; each file uses its own tables. */
export async function shareDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<void> {
  const dynamo = await startDynamoDbLocal(options);
  process.env.TEST_DYNAMODB_ENDPOINT = dynamo.endpoint;
  (globalThis as { __DYNAMODB_LOCAL__?: typeof dynamo }).__DYNAMODB_LOCAL__ = dynamo;
}

export default function globalSetup(): Promise<void> {
  return shareDynamoDbLocal();
}
