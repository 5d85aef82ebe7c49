import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { once } from '../config';
import { tracer } from '../observability/tracer';
import { createDynamoClient, type DynamoClientOptions } from './dynamo-client';

/*
 * Apart from dynamo-client.ts, which the CLI and the local tools use too: the X-Ray SDK the tracer loads turns on an
 * async hook in every process that imports it, which only the functions need.
 */

/**
 * A client for a function: {@link createDynamoClient}, with every call a DynamoDB subsegment of the invocation's
 * X-Ray trace (Powertools Tracer; the client is returned as it is when tracing is off).
 */
export function createLambdaDynamoClient(options: DynamoClientOptions = {}): DynamoDBClient {
  return tracer.captureAWSv3Client(createDynamoClient(options));
}

/** The function instance's one client, built on first use and reused by every invocation (keep-alive). */
export const lambdaDynamoClient = once(() => createLambdaDynamoClient());
