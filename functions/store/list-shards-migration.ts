/**
 * A one-off migration of a table's data, run by the operator (`inventory add-list-shards`) and by `local/tables.ts`
 * (`npm start`, the tests), never by a function: a module that no handler imports, so no bundle reaches it. It
 * stays under functions/store/ beside the row codec it shares rather than in cli/, which local/ may not import
 * (README, Layout).
 */

import { type AttributeValue, type DynamoDBClient, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { INVENTORY_LIST_INDEX, INVENTORY_TABLE_KEY } from '../../service/names';
import { listShard } from './inventory-row';

/**
 * Gives every entry written before the list index existed its shard (`listShard`), so the list shows it: a Scan for
 * rows without one, and an UpdateItem per row that sets only that attribute and never creates an entry. Quantity and
 * status stay as they are, so the history records nothing. Returns how many rows it changed.
 */
export async function addMissingListShards(client: DynamoDBClient, tableName: string): Promise<number> {
  const shard = INVENTORY_LIST_INDEX.partition.name;
  let changed = 0;
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        ProjectionExpression: '#petId',
        FilterExpression: 'attribute_not_exists(#shard)',
        ExpressionAttributeNames: { '#petId': INVENTORY_TABLE_KEY.name, '#shard': shard },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const row of page.Items ?? []) {
      const petId = row[INVENTORY_TABLE_KEY.name]?.N;
      if (petId === undefined) continue;
      try {
        await client.send(
          new UpdateItemCommand({
            TableName: tableName,
            Key: { [INVENTORY_TABLE_KEY.name]: { N: petId } },
            UpdateExpression: 'SET #shard = :shard',
            ConditionExpression: 'attribute_exists(#petId)',
            ExpressionAttributeNames: { '#petId': INVENTORY_TABLE_KEY.name, '#shard': shard },
            ExpressionAttributeValues: { ':shard': { N: String(listShard(petId)) } },
          }),
        );
        changed += 1;
      } catch (error) {
        // Deleted since the Scan saw it: nothing to list.
        if ((error as Error | undefined)?.name !== 'ConditionalCheckFailedException') throw error;
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return changed;
}
