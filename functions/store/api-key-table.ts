import {
  type AttributeValue,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  paginateScan,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { ApiKeyRecord } from '../api-keys/key';
import type { ApiKeyRepository } from '../api-keys/repository';
import { translateStorageError } from './storage-errors';

/** Options of {@link ApiKeyTable}. */
export interface ApiKeyTableOptions {
  client: DynamoDBClient;
  tableName: string;
}

/**
 * The API keys table, keyed by `keyHash` (hex SHA-256 of the key); the key itself is never stored. Low-level
 * attribute maps rather than lib-dynamodb's document client: the authorizer's bundle has no room for it (see
 * docs/performance.md, "lib-dynamodb").
 */
export class ApiKeyTable implements ApiKeyRepository {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: ApiKeyTableOptions) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    try {
      const result = await this.#client.send(
        new GetItemCommand({ TableName: this.#tableName, Key: { keyHash: { S: keyHash } }, ConsistentRead: true }),
      );
      return result.Item ? toRecord(result.Item) : undefined;
    } catch (error) {
      return translateStorageError(error, 'GetItem');
    }
  }

  async create(record: ApiKeyRecord): Promise<void> {
    await this.#client.send(
      new PutItemCommand({
        TableName: this.#tableName,
        Item: toItem(record),
        ConditionExpression: 'attribute_not_exists(keyHash)',
      }),
    );
  }

  async list(): Promise<ApiKeyRecord[]> {
    const records: ApiKeyRecord[] = [];
    for await (const page of paginateScan(
      { client: this.#client },
      { TableName: this.#tableName, ConsistentRead: true },
    ))
      for (const item of page.Items ?? []) records.push(toRecord(item));
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.keyId.localeCompare(b.keyId));
  }

  async revoke(keyId: string, now: Date = new Date()): Promise<ApiKeyRecord | undefined> {
    const record = (await this.list()).find((candidate) => candidate.keyId === keyId);
    if (!record) return undefined;
    if (record.revokedAt) return record;
    const revokedAt = now.toISOString();
    await this.#client.send(
      new UpdateItemCommand({
        TableName: this.#tableName,
        Key: { keyHash: { S: record.keyHash } },
        UpdateExpression: 'SET revokedAt = :revokedAt',
        ConditionExpression: 'attribute_exists(keyHash)',
        ExpressionAttributeValues: { ':revokedAt': { S: revokedAt } },
      }),
    );
    return { ...record, revokedAt };
  }

  async delete(keyHash: string): Promise<void> {
    await this.#client.send(new DeleteItemCommand({ TableName: this.#tableName, Key: { keyHash: { S: keyHash } } }));
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
