import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { InventoryItemNotFoundError } from '../inventory/errors';
import { comparePetIds, type InventoryRepository } from '../inventory/repository';
import { type InventoryItem, isPetStatus } from '../inventory/types';
import { translateStorageError } from './dynamo-client';

/** Options of the DynamoDB inventory adapter. */
export interface DynamoInventoryRepositoryOptions {
  client: DynamoDBClient;
  tableName: string;
  /**
   * Parallel Scan segments used by `listAll`.
   * @default 4
   */
  scanSegments?: number;
}

/**
 * Inventory rows in DynamoDB, keyed by `petId` (a Number attribute, so int64 ids sort and compare as numbers).
 * Uses the low-level client: Number attributes travel as decimal strings, which keeps int64 ids exact with no
 * conversion.
 */
export class DynamoInventoryRepository implements InventoryRepository {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly scanSegments: number;

  constructor(options: DynamoInventoryRepositoryOptions) {
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
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { petId: { N: petId } },
          UpdateExpression: 'SET quantity = :quantity',
          ConditionExpression: 'attribute_exists(petId)',
          ExpressionAttributeValues: { ':quantity': { N: String(quantity) } },
          ReturnValues: 'ALL_NEW',
        }),
      );
      if (!result.Attributes) throw new Error('UpdateItem returned no attributes');
      return toInventoryItem(result.Attributes);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new InventoryItemNotFoundError(petId);
      return translateStorageError(error, 'UpdateItem');
    }
  }

  /** Reads every page of one Scan segment; a table larger than one 1 MB page comes back whole. */
  private async scanSegment(segment: number): Promise<InventoryItem[]> {
    const items: InventoryItem[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      try {
        const page = await this.client.send(
          new ScanCommand({
            TableName: this.tableName,
            ConsistentRead: true,
            Segment: segment,
            TotalSegments: this.scanSegments,
            ProjectionExpression: 'petId, quantity, #status',
            ExpressionAttributeNames: { '#status': 'status' },
            ExclusiveStartKey: startKey,
          }),
        );
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
