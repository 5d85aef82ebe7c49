import {
  type AttributeValue,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { API_KEYS_TABLE_KEY } from '../../service/names';
import { type ApiKeyRecord, DEFAULT_API_KEY_SCOPE, isApiKeyScope } from '../api-keys/key';
import type { ApiKeyRepository } from '../api-keys/repository';
import type { TableOptions } from './dynamo-client';
import { MalformedRowError, translateStorageError } from './storage-errors';

/** The table's key attribute: the record's `keyHash`. */
export const KEY = API_KEYS_TABLE_KEY.name;

/**
 * The API keys table, keyed by `keyHash` (the key itself is never stored); rows are checked on the way out. Listing and
 * revoking, which no function does, are the CLI's (cli/api-key-admin-table.ts).
 */
export class ApiKeyTable implements ApiKeyRepository {
  protected readonly client: DynamoDBClient;
  protected readonly tableName: string;

  constructor(options: TableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    try {
      const result = await this.client.send(
        new GetItemCommand({ TableName: this.tableName, Key: keyOf(keyHash), ConsistentRead: true }),
      );
      return result.Item ? toApiKeyRecord(result.Item) : undefined;
    } catch (error) {
      return translateStorageError(error, 'GetItem');
    }
  }

  async create(record: ApiKeyRecord): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: marshall(record, { removeUndefinedValues: true }),
        ConditionExpression: `attribute_not_exists(${KEY})`,
      }),
    );
  }

  async delete(keyHash: string): Promise<void> {
    await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: keyOf(keyHash) }));
  }
}

/** Converts a stored row; a row that breaks the model is a {@link MalformedRowError}, never a record with blanks. */
export function toApiKeyRecord(item: Record<string, AttributeValue>): ApiKeyRecord {
  const { keyHash, keyId, name, createdAt, revokedAt, scope = DEFAULT_API_KEY_SCOPE } = unmarshall(item);
  // The hash is not a secret (the key has 256 random bits) but the key id is what an operator knows a key by.
  const row = typeof keyId === 'string' ? keyId : '?';
  const refuse = (attribute: string) => new MalformedRowError('ApiKeyRecord', row, attribute);
  if (!isText(keyHash)) throw refuse('keyHash');
  if (!isText(keyId)) throw refuse('keyId');
  if (typeof name !== 'string') throw refuse('name');
  if (!isText(createdAt)) throw refuse('createdAt');
  if (revokedAt !== undefined && !isText(revokedAt)) throw refuse('revokedAt');
  if (!isApiKeyScope(scope)) throw refuse('scope');
  return { keyHash, keyId, name, createdAt, scope, ...(revokedAt === undefined ? {} : { revokedAt }) };
}

export function keyOf(keyHash: string): Record<string, AttributeValue> {
  return marshall({ [KEY]: keyHash });
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
