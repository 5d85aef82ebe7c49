import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { once } from '../config';
import { tracer } from '../observability/tracer';
import { createDynamoClient, type DynamoClientOptions } from './dynamo-client';

/** A function's client, each call traced (apart from dynamo-client.ts: the X-Ray SDK only the functions load). */
export function createLambdaDynamoClient(options: DynamoClientOptions = {}): DynamoDBClient {
  return tracer.captureAWSv3Client(createDynamoClient(options));
}

/** The function instance's one client, built on first use and reused by every invocation (keep-alive). */
export const lambdaDynamoClient = once(() => createLambdaDynamoClient());
