import type { DynamoDbLocal } from '../../local/dynamodb-local';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __DYNAMODB_LOCAL__?: DynamoDbLocal }).__DYNAMODB_LOCAL__?.stop();
}
