import { paginateScan, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { ApiKeyRecord } from '../functions/api-keys/key';
import { ApiKeyTable, KEY, keyOf, toApiKeyRecord } from '../functions/store/api-key-table';

/** The keys table as the operator CLI uses it: ApiKeyTable plus listing and revoking, which no function does. */
export class ApiKeyAdminTable extends ApiKeyTable {
  async list(): Promise<ApiKeyRecord[]> {
    const records: ApiKeyRecord[] = [];
    for await (const page of paginateScan({ client: this.client }, { TableName: this.tableName, ConsistentRead: true }))
      for (const item of page.Items ?? []) records.push(toApiKeyRecord(item));
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.keyId.localeCompare(b.keyId));
  }

  /** Revokes the key with this id, reading only its own row: another key's malformed row never blocks it. */
  async revoke(keyId: string, now: Date = new Date()): Promise<ApiKeyRecord | undefined> {
    const record = await this.findById(keyId);
    if (!record) return undefined;
    if (record.revokedAt) return record;
    const revokedAt = now.toISOString();
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: keyOf(record.keyHash),
        UpdateExpression: 'SET revokedAt = :revokedAt',
        ConditionExpression: `attribute_exists(${KEY})`,
        ExpressionAttributeValues: marshall({ ':revokedAt': revokedAt }),
      }),
    );
    return { ...record, revokedAt };
  }

  /** The row with this key id (a Scan filtered on keyId, stopping at the first match: ids are unique). */
  private async findById(keyId: string): Promise<ApiKeyRecord | undefined> {
    const query = {
      TableName: this.tableName,
      ConsistentRead: true,
      FilterExpression: 'keyId = :keyId',
      ExpressionAttributeValues: marshall({ ':keyId': keyId }),
    };
    for await (const page of paginateScan({ client: this.client }, query)) {
      const [item] = page.Items ?? [];
      if (item) return toApiKeyRecord(item);
    }
    return undefined;
  }
}
