import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ApiKeyRecord } from '../api-keys/key';
import type { ApiKeyRepository } from '../api-keys/repository';
import type { DynamoOperations } from './dynamo-operations';
import { asDynamoOperations } from './sdk-operations';
import { translateStorageError } from './storage-errors';

/** Options of the API key table adapter. */
export interface ApiKeyTableOptions {
  /** The lean client (`lean-dynamodb.ts`) in the authorizer; `sdkOperations(client)` elsewhere. */
  client: DynamoOperations;
  tableName: string;
}

/**
 * API keys in DynamoDB, keyed by `keyHash` (hex SHA-256 of the key); the key itself is never stored. The
 * authorizer uses it over the lean client: it reaches the SDK only through {@link DynamoApiKeyRepository}, which
 * esbuild leaves out of the authorizer's bundle when unused.
 */
export class ApiKeyTable implements ApiKeyRepository {
  private readonly client: DynamoOperations;
  private readonly tableName: string;

  constructor(options: ApiKeyTableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    try {
      const result = await this.client.getItem({
        TableName: this.tableName,
        Key: { keyHash: { S: keyHash } },
        ConsistentRead: true,
      });
      return result.Item ? toRecord(result.Item) : undefined;
    } catch (error) {
      return translateStorageError(error, 'GetItem');
    }
  }

  async create(record: ApiKeyRecord): Promise<void> {
    await this.client.putItem({
      TableName: this.tableName,
      Item: toItem(record),
      ConditionExpression: 'attribute_not_exists(keyHash)',
    });
  }

  async list(): Promise<ApiKeyRecord[]> {
    const records: ApiKeyRecord[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.scan({
        TableName: this.tableName,
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      });
      for (const item of page.Items ?? []) records.push(toRecord(item));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.keyId.localeCompare(b.keyId));
  }

  async revoke(keyId: string, now: Date = new Date()): Promise<ApiKeyRecord | undefined> {
    const record = (await this.list()).find((candidate) => candidate.keyId === keyId);
    if (!record) return undefined;
    if (record.revokedAt) return record;
    const revokedAt = now.toISOString();
    await this.client.updateItem({
      TableName: this.tableName,
      Key: { keyHash: { S: record.keyHash } },
      UpdateExpression: 'SET revokedAt = :revokedAt',
      ConditionExpression: 'attribute_exists(keyHash)',
      ExpressionAttributeValues: { ':revokedAt': { S: revokedAt } },
    });
    return { ...record, revokedAt };
  }

  async delete(keyHash: string): Promise<void> {
    await this.client.deleteItem({
      TableName: this.tableName,
      Key: { keyHash: { S: keyHash } },
    });
  }
}

/**
 * {@link ApiKeyTable} for callers holding an SDK `DynamoDBClient`: the operator CLI, `npm start` and the tests.
 * The authorizer uses `ApiKeyTable` over the lean client instead, so that the SDK stays out of its bundle.
 */
export class DynamoApiKeyRepository extends ApiKeyTable {
  constructor(options: { client: DynamoDBClient | DynamoOperations; tableName: string }) {
    super({ client: asDynamoOperations(options.client), tableName: options.tableName });
  }
}

function toItem(record: ApiKeyRecord): Record<string, AttributeValue> {
  const item: Record<string, AttributeValue> = {
    keyHash: { S: record.keyHash },
    keyId: { S: record.keyId },
    name: { S: record.name },
    createdAt: { S: record.createdAt },
  };
  if (record.revokedAt) item.revokedAt = { S: record.revokedAt };
  return item;
}

function toRecord(item: Record<string, AttributeValue>): ApiKeyRecord {
  const record: ApiKeyRecord = {
    keyHash: item.keyHash?.S ?? '',
    keyId: item.keyId?.S ?? '',
    name: item.name?.S ?? '',
    createdAt: item.createdAt?.S ?? '',
  };
  if (item.revokedAt?.S) record.revokedAt = item.revokedAt.S;
  return record;
}
