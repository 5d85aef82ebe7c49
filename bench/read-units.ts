import { randomUUID } from 'node:crypto';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { importActor } from '../cli/commands/inventory';
import { writeInventory } from '../cli/inventory/batch-writer';
import type { InventoryItem } from '../functions/inventory/types';
import { inventoryAttributes, signedInventoryAttributes } from '../functions/store/inventory-table';
import { scanReadUnitsPerPage } from '../local/tables';

/** What one strongly consistent, single-segment Scan of the whole table consumed, for entries as a writer stores them. */
export interface ReadUnitsFigure {
  writer: string;
  entries: number;
  pages: number;
  units: number;
  unitsPerMillionEntries: number;
}

/**
 * The read units the list's Scan costs per entry, for entries as each writer stores them: DynamoDB charges a Scan
 * one unit per 4 KB of the items a page reads (strongly consistent), whatever the projection, so what a writer adds
 * to an item (issue 13's `lastChange`) is paid by every list. Measured with `ReturnConsumedCapacity` on one table,
 * each writer's pass replacing the previous one's items.
 */
export async function measureReadUnits(
  client: DynamoDBClient,
  tableName: string,
  items: readonly InventoryItem[],
): Promise<ReadUnitsFigure[]> {
  const at = () => new Date().toISOString();
  const actor = importActor('stock.csv', process.env);
  const writers: [string, (item: InventoryItem) => Record<string, AttributeValue>][] = [
    ['no one (petId, quantity, status only)', inventoryAttributes],
    [
      'the API (PATCH)',
      (item) =>
        signedInventoryAttributes(item, {
          source: 'api',
          actor: 'key_0123456789abcdef',
          requestId: randomUUID(),
          at: at(),
        }),
    ],
    ['an import', (item) => signedInventoryAttributes(item, { source: 'import', actor, at: at() })],
  ];
  const figures: ReadUnitsFigure[] = [];
  for (const [writer, toItem] of writers) {
    await writeInventory(items, { client, tableName, concurrency: 4, toItem });
    const pages = await scanReadUnitsPerPage(client, tableName);
    const units = pages.reduce((sum, pageUnits) => sum + pageUnits, 0);
    figures.push({
      writer,
      entries: items.length,
      pages: pages.length,
      units,
      unitsPerMillionEntries: Math.round((units / items.length) * 1_000_000),
    });
  }
  return figures;
}
