import { randomUUID } from 'node:crypto';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { importActor } from '../cli/commands/inventory';
import { writeInventory } from '../cli/inventory/batch-writer';
import { importRows } from '../cli/inventory/import-writer';
import type { InventoryItem } from '../functions/inventory/types';
import { inventoryAttributes, signedInventoryAttributes } from '../functions/store/inventory-row';
import { InventoryTable } from '../functions/store/inventory-table';
import { ensureTables } from '../local/tables';
import { LOCAL_TABLE_NAMES } from '../service/local-dynamodb';
import { benchInventory } from './inventory';
import { columnsTable, round, type Target, target } from './stats';

/** What one whole list consumed, for entries as a writer stores them. */
export interface ReadUnitsFigure {
  writer: string;
  entries: number;
  /** The pages the list read, whatever it read them with. */
  pages: number;
  units: number;
  unitsPerMillionEntries: number;
}

const importActorOf = () => importActor('stock.csv', process.env);
const importToItem = () => {
  const actor = importActorOf();
  return (item: InventoryItem) =>
    signedInventoryAttributes(item, { source: 'import', actor, at: new Date().toISOString() });
};

/**
 * On a table of its own: the list's read units for `entries` entries as each writer stores them, then the import
 * rate of `entries` more, written as `inventory import` writes them (its writer and default concurrency).
 */
export async function measureReads(client: DynamoDBClient, entries: number) {
  const tables = { ...LOCAL_TABLE_NAMES, inventory: `${LOCAL_TABLE_NAMES.inventory}-read-units` };
  await ensureTables(client, tables, { inventoryStream: false });
  const readUnits = await measureReadUnits(client, tables.inventory, benchInventory(0, entries));
  const imported = benchInventory(entries, 2 * entries);
  const started = performance.now();
  const actor = importActorOf();
  await importRows(imported, {
    client,
    tableName: tables.inventory,
    origin: () => ({ source: 'import', actor, at: new Date().toISOString() }),
  });
  const seconds = (performance.now() - started) / 1000;
  const rowsPerSecond = Math.round(imported.length / seconds);
  return { readUnits, importRate: { entries: imported.length, seconds: round(seconds, 2), rowsPerSecond } };
}

/**
 * The list's read units per entry for entries as each writer stores them (`lastChange` should cost the list
 * nothing), summed from `ConsumedCapacity`; the second of two lists on one adapter is counted.
 */
async function measureReadUnits(
  client: DynamoDBClient,
  tableName: string,
  items: readonly InventoryItem[],
): Promise<ReadUnitsFigure[]> {
  const api = (item: InventoryItem) =>
    signedInventoryAttributes(item, {
      source: 'api',
      actor: 'key_0123456789abcdef',
      requestId: randomUUID(),
      at: new Date().toISOString(),
    });
  const writers: [string, (item: InventoryItem) => Record<string, AttributeValue>][] = [
    ['no one (petId, quantity, status only)', inventoryAttributes],
    ['the API (PATCH)', api],
    ['an import', importToItem()],
  ];
  const figures: ReadUnitsFigure[] = [];
  for (const [writer, toItem] of writers) {
    await writeInventory(items, { client, tableName, concurrency: 4, toItem });
    const pages: number[] = [];
    const table = new InventoryTable({ client: recording(client, pages), tableName, readUnitsPerSecond: 1e9 });
    for await (const _ of table.list());
    pages.length = 0;
    for await (const _ of table.list());
    const units = pages.reduce((sum, page) => sum + page, 0);
    const unitsPerMillionEntries = Math.round((units / items.length) * 1_000_000);
    figures.push({ writer, entries: items.length, pages: pages.length, units, unitsPerMillionEntries });
  }
  return figures;
}

/** `client`, recording the read units each of its answers reports into `units`. */
function recording(client: DynamoDBClient, units: number[]): DynamoDBClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return async (command: Parameters<DynamoDBClient['send']>[0], options?: object) => {
        const page = (await target.send(command, options)) as { ConsumedCapacity?: { CapacityUnits?: number } };
        units.push(page.ConsumedCapacity?.CapacityUnits ?? Number.NaN);
        return page;
      };
    },
  });
}

/** Rows per second of an import: the CLI's writer, its default concurrency, rows signed as an import. */
export interface ImportRateFigure {
  entries: number;
  seconds: number;
  rowsPerSecond: number;
}

export function readUnitsTable(readUnits: readonly ReadUnitsFigure[]): string {
  return columnsTable(readUnits, [
    ['entries written by', (r) => r.writer],
    ['entries', (r) => r.entries],
    ['pages', (r) => r.pages],
    ['read units', (r) => r.units],
    ['per 1,000,000 entries', (r) => r.unitsPerMillionEntries],
  ]);
}

export function importRateLine(importRate: ImportRateFigure): string {
  return `${importRate.entries} rows in ${importRate.seconds} s: ${importRate.rowsPerSecond} rows/s.`;
}

export function readTargets(readUnits: readonly ReadUnitsFigure[], importRate: ImportRateFigure): Target[] {
  return [
    ...readUnits.map((r) =>
      target(`list read units per 1,000,000 entries written by ${r.writer}`, r.unitsPerMillionEntries, 10_000),
    ),
    target('import rows/s with the list index (at least)', importRate.rowsPerSecond, 1000, true),
  ];
}
