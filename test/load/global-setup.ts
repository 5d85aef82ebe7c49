import { OPTIMIZING_COMPILER } from '../../local/dynamodb-local';
import { shareDynamoDbLocal } from '../helpers/global-setup';

/**
 * The load tests' DynamoDB Local, with the JVM's optimizing compiler: these tests write 100,000 entries and more, where
 * it runs a third faster than the quick compiler the stand-in starts with.
 */
export default function loadGlobalSetup(): Promise<void> {
  return shareDynamoDbLocal({ javaOptions: OPTIMIZING_COMPILER });
}
