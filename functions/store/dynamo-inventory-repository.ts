import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InventoryItemNotFoundError } from '../inventory/errors';
import { comparePetIds, type InventoryRepository } from '../inventory/repository';
import { type InventoryItem, isPetStatus } from '../inventory/types';
import type { DynamoOperations } from './dynamo-operations';
import { asDynamoOperations } from './sdk-operations';
import { translateStorageError } from './storage-errors';

/** Options of the inventory table adapter. */
export interface InventoryTableOptions {
  /** The lean client (`lean-dynamodb.ts`) in the functions; `sdkOperations(client)` elsewhere. */
  client: DynamoOperations;
  tableName: string;
  /**
   * Parallel Scan segments used by `listAll`.
   * @default 4
   */
  scanSegments?: number;
}

/**
 * Inventory rows in DynamoDB, keyed by `petId` (a Number attribute, so int64 ids sort and compare as numbers).
 * Works on the low-level attribute maps: Number attributes travel as decimal strings, which keeps int64 ids exact
 * with no conversion. The functions use it over the lean client: it reaches the SDK only through
 * {@link DynamoInventoryRepository}, which esbuild leaves out of their bundles when unused
 * (test/integration/lean-dynamodb-bundles.test.ts checks that no SDK module is bundled).
 */
export class InventoryTable implements InventoryRepository {
  private readonly client: DynamoOperations;
  private readonly tableName: string;
  private readonly scanSegments: number;

  constructor(options: InventoryTableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.scanSegments = options.scanSegments ?? 4;
  }

  async listAll(): Promise<InventoryItem[]> {
    const segments = await Promise.all(
      Array.from({ length: this.scanSegments }, (_, segment) => this.scanSegment(segment)),
    );
    return segments.flat().sort((a, b) => comparePetIds(a.petId, b.petId));
  }

  async setQuantity(petId: string, quantity: number): Promise<InventoryItem> {
    try {
      const result = await this.client.updateItem({
        TableName: this.tableName,
        Key: { petId: { N: petId } },
        UpdateExpression: 'SET quantity = :quantity',
        ConditionExpression: 'attribute_exists(petId)',
        ExpressionAttributeValues: { ':quantity': { N: String(quantity) } },
        ReturnValues: 'ALL_NEW',
      });
      if (!result.Attributes) throw new Error('UpdateItem returned no attributes');
      return toInventoryItem(result.Attributes);
    } catch (error) {
      // By name: the SDK's ConditionalCheckFailedException and the lean client's error both carry it.
      if ((error as Error | undefined)?.name === 'ConditionalCheckFailedException')
        throw new InventoryItemNotFoundError(petId);
      return translateStorageError(error, 'UpdateItem');
    }
  }

  /** Reads every page of one Scan segment; a table larger than one 1 MB page comes back whole. */
  private async scanSegment(segment: number): Promise<InventoryItem[]> {
    const items: InventoryItem[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      try {
        const page = await this.client.scan({
          TableName: this.tableName,
          ConsistentRead: true,
          Segment: segment,
          TotalSegments: this.scanSegments,
          ProjectionExpression: 'petId, quantity, #status',
          ExpressionAttributeNames: { '#status': 'status' },
          ExclusiveStartKey: startKey,
        });
        for (const row of page.Items ?? []) items.push(toInventoryItem(row));
        startKey = page.LastEvaluatedKey;
      } catch (error) {
        return translateStorageError(error, 'Scan');
      }
    } while (startKey);
    return items;
  }
}

/** Converts a stored row; a row that breaks the model is a data defect, not a client error. */
export function toInventoryItem(row: Record<string, AttributeValue>): InventoryItem {
  const petId = row.petId?.N;
  const quantity = row.quantity?.N;
  const status = row.status?.S;
  if (petId === undefined || quantity === undefined || !isPetStatus(status)) {
    throw new Error(`Inventory row ${petId ?? '?'} does not match the InventoryItem model`);
  }
  return { petId, quantity: Number(quantity), status };
}

/** Options of {@link DynamoInventoryRepository}. */
export interface DynamoInventoryRepositoryOptions extends Omit<InventoryTableOptions, 'client'> {
  /** An SDK client (CLI, tests) or any {@link DynamoOperations}, such as the lean client. */
  client: DynamoDBClient | DynamoOperations;
}

/**
 * {@link InventoryTable} for callers holding an SDK `DynamoDBClient`: the operator CLI's export and the tests.
 * The Lambda functions use `InventoryTable` over the lean client instead, so that the SDK stays out of their
 * bundles.
 */
export class DynamoInventoryRepository extends InventoryTable {
  constructor(options: DynamoInventoryRepositoryOptions) {
    super({ ...options, client: asDynamoOperations(options.client) });
  }
}
