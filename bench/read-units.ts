import { randomUUID } from 'node:crypto';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { importActor } from '../cli/commands/inventory';
import { writeInventory } from '../cli/inventory/batch-writer';
import type { InventoryItem } from '../functions/inventory/types';
import { inventoryAttributes, signedInventoryAttributes } from '../functions/store/inventory-row';
import { InventoryTable } from '../functions/store/inventory-table';

/** What one whole list consumed, for entries as a writer stores them. */
export interface ReadUnitsFigure {
  writer: string;
  entries: number;
  /** The index's Query pages of the list. */
  pages: number;
  /** Their read units: what every list of the store costs. */
  units: number;
  unitsPerMillionEntries: number;
  /**
   * The read units of the Scan page an instance's first list reads before it finds the store too large for it
   * (`smallTableEntries`): once per instance, whatever the store's size, so not counted per entry.
   */
  firstListScanUnits: number;
}

/**
 * The read units the list costs per entry, for entries as each writer stores them: the list reads the list index,
 * which holds only what it answers, so what a writer adds to an item (`lastChange`) should cost it nothing; and,
 * apart, the one Scan page of the table an instance's first list reads (the whole list of a small store). Read by
 * the list's own adapter, paced at a rate it never reaches so that every Query asks for `ConsumedCapacity`, summed
 * as DynamoDB (Local) reports it; one table, each writer's pass replacing the previous one's items.
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
    const pages = await listReadUnitsPerPage(client, tableName);
    const queries = pages.filter((page) => page.operation === 'QueryCommand');
    const units = queries.reduce((sum, page) => sum + page.units, 0);
    figures.push({
      writer,
      entries: items.length,
      pages: queries.length,
      units,
      unitsPerMillionEntries: Math.round((units / items.length) * 1_000_000),
      firstListScanUnits: pages
        .filter((page) => page.operation === 'ScanCommand')
        .reduce((sum, page) => sum + page.units, 0),
    });
  }
  return figures;
}

/** The read units of each page of one whole list on a new instance, as DynamoDB reports them, with its command. */
async function listReadUnitsPerPage(
  client: DynamoDBClient,
  tableName: string,
): Promise<{ operation: string; units: number }[]> {
  const units: { operation: string; units: number }[] = [];
  const recording = new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return async (command: Parameters<DynamoDBClient['send']>[0], options?: object) => {
        const page = (await target.send(command, options)) as { ConsumedCapacity?: { CapacityUnits?: number } };
        units.push({ operation: command.constructor.name, units: page.ConsumedCapacity?.CapacityUnits ?? Number.NaN });
        return page;
      };
    },
  });
  const table = new InventoryTable({ client: recording, tableName, readUnitsPerSecond: 1_000_000_000 });
  for await (const _ of table.list());
  return units;
}

/** Rows per second of an import (the CLI's writer, its default concurrency, rows signed as an import). */
export interface ImportRateFigure {
  table: string;
  entries: number;
  seconds: number;
  rowsPerSecond: number;
}

/**
 * What the list index costs an import on DynamoDB Local: the same entries written as `inventory import` writes them
 * into a table with the list index and into one without, alternating twice (a busy machine drifts; pairs do not).
 */
export async function measureImportRate(
  client: DynamoDBClient,
  tables: { withIndex: string; withoutIndex: string },
  items: readonly InventoryItem[],
): Promise<ImportRateFigure[]> {
  const actor = importActor('stock.csv', process.env);
  const toItem = (item: InventoryItem) =>
    signedInventoryAttributes(item, { source: 'import', actor, at: new Date().toISOString() });
  const seconds: Record<string, number[]> = { [tables.withIndex]: [], [tables.withoutIndex]: [] };
  for (let round = 0; round < 2; round++) {
    for (const tableName of [tables.withIndex, tables.withoutIndex]) {
      const started = performance.now();
      await writeInventory(items, { client, tableName, toItem });
      seconds[tableName]?.push((performance.now() - started) / 1000);
    }
  }
  return [tables.withIndex, tables.withoutIndex].map((table) => {
    const best = Math.min(...(seconds[table] ?? [Number.NaN]));
    return {
      table: table === tables.withIndex ? 'with the list index' : 'without an index',
      entries: items.length,
      seconds: Math.round(best * 100) / 100,
      rowsPerSecond: Math.round(items.length / best),
    };
  });
}
