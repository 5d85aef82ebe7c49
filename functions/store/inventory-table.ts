import { type AttributeValue, type DynamoDBClient, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { InventoryItemNotFoundError } from '../inventory/errors';
import { comparePetIds, type InventoryRepository } from '../inventory/repository';
import { type InventoryItem, isPetStatus } from '../inventory/types';
import { translateStorageError } from './storage-errors';

/** Options of {@link InventoryTable}. */
export interface InventoryTableOptions {
  client: DynamoDBClient;
  tableName: string;
  /**
   * Most parallel Scan segments `listAll` uses.
   * @default 4
   */
  maxScanSegments?: number;
  /**
   * Entries per Scan segment when sizing a parallel Scan from the previous list.
   * @default 25000
   */
  entriesPerSegment?: number;
}

/**
 * The inventory table, keyed by `petId` (a Number attribute, so int64 ids sort and compare as numbers). It works on
 * the SDK's low-level attribute maps rather than the document client: Number attributes travel as the decimal
 * strings the domain already holds, so int64 ids stay exact with no wrapping or conversion.
 */
export class InventoryTable implements InventoryRepository {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly maxScanSegments: number;
  private readonly entriesPerSegment: number;
  /** Entries the previous list of this instance found; unknown until the first. */
  private lastListed: number | undefined;

  constructor(options: InventoryTableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.maxScanSegments = options.maxScanSegments ?? 4;
    this.entriesPerSegment = options.entriesPerSegment ?? 25_000;
  }

  /**
   * Every entry, sorted by petId. A large table is read as a parallel Scan sized from the previous list; the first
   * list of an instance (a cold start) reads one segment, so a small store pays one connection, not four.
   */
  async listAll(): Promise<InventoryItem[]> {
    const total = this.scanSegmentsFor(this.lastListed);
    const segments = await Promise.all(Array.from({ length: total }, (_, segment) => this.scanSegment(segment, total)));
    const items = segments.flat().sort((a, b) => comparePetIds(a.petId, b.petId));
    this.lastListed = items.length;
    return items;
  }

  /** How many Scan segments a list of about `entries` entries gets. */
  scanSegmentsFor(entries: number | undefined): number {
    if (entries === undefined) return 1;
    return Math.min(this.maxScanSegments, Math.max(1, Math.ceil(entries / this.entriesPerSegment)));
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
      if ((error as Error | undefined)?.name === 'ConditionalCheckFailedException')
        throw new InventoryItemNotFoundError(petId);
      return translateStorageError(error, 'UpdateItem');
    }
  }

  /** Reads every page of one Scan segment; a table larger than one 1 MB page comes back whole. */
  private async scanSegment(segment: number, totalSegments: number): Promise<InventoryItem[]> {
    const items: InventoryItem[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      try {
        const page = await this.client.send(
          new ScanCommand({
            TableName: this.tableName,
            ConsistentRead: true,
            ...(totalSegments > 1 ? { Segment: segment, TotalSegments: totalSegments } : {}),
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

/** An entry as the attribute map the table stores (petId and quantity as Number attributes). */
export function inventoryAttributes(item: InventoryItem): Record<string, AttributeValue> {
  return { petId: { N: item.petId }, quantity: { N: String(item.quantity) }, status: { S: item.status } };
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
