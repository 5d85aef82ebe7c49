/** A whole list's read units for entries as each writer stores them, and the CLI import's rate, on a table of its own. */
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
import { round, type Section, type Target, target } from './measure';

const now = () => new Date().toISOString();

/**
 * `entries` entries written by each writer in turn, each time listed twice on one adapter and the second counted
 * from its pages' `ConsumedCapacity`; then `entries` more imported as `inventory import` writes them, timed.
 */
export async function measureReads(client: DynamoDBClient, entries: number): Promise<Record<string, Section>> {
  const tableName = `${LOCAL_TABLE_NAMES.inventory}-read-units`;
  await ensureTables(client, { ...LOCAL_TABLE_NAMES, inventory: tableName }, { streams: false });
  const items = benchInventory(0, entries);
  const actor = importActor('stock.csv', process.env);
  const byApi = () => ({ source: 'api' as const, actor: 'key_0123456789abcdef', requestId: randomUUID(), at: now() });
  const byImport = () => ({ source: 'import' as const, actor, at: now() });
  const writers: [string, (item: InventoryItem) => Record<string, AttributeValue>][] = [
    ['no one (petId, quantity, status only)', inventoryAttributes],
    ['the API (PATCH)', (item) => signedInventoryAttributes(item, byApi())],
    ['an import', (item) => signedInventoryAttributes(item, byImport())],
  ];
  const rows: (string | number)[][] = [];
  const targets: Target[] = [];
  for (const [writer, toItem] of writers) {
    await writeInventory(items, { client, tableName, concurrency: 4, toItem });
    const pages: number[] = [];
    // Every answer's read units, as the list's own adapter reads the pages.
    const recording = new Proxy(client, {
      get: (target, property, receiver) =>
        property !== 'send'
          ? Reflect.get(target, property, receiver)
          : async (...args: Parameters<DynamoDBClient['send']>) => {
              const page = (await target.send(...args)) as unknown as { ConsumedCapacity?: { CapacityUnits?: number } };
              pages.push(page.ConsumedCapacity?.CapacityUnits ?? Number.NaN);
              return page;
            },
    });
    const table = new InventoryTable({ client: recording, tableName, readUnitsPerSecond: 1e9 });
    for await (const _ of table.list());
    pages.length = 0;
    for await (const _ of table.list());
    const units = pages.reduce((sum, page) => sum + page, 0);
    const unitsPerMillionEntries = Math.round((units / entries) * 1_000_000);
    rows.push([writer, entries, pages.length, units, unitsPerMillionEntries]);
    targets.push(target(`list read units per 1,000,000 entries written by ${writer}`, unitsPerMillionEntries, 10_000));
  }
  const imported = benchInventory(entries, 2 * entries);
  const started = performance.now();
  await importRows(imported, { client, tableName, origin: byImport });
  const seconds = (performance.now() - started) / 1000;
  const rowsPerSecond = Math.round(entries / seconds);
  const readUnits = {
    columns: ['entries written by', 'entries', 'pages', 'read units', 'per 1,000,000 entries'],
    rows,
    targets,
  };
  const importRate = {
    note: `${entries} rows in ${round(seconds, 2)} s: ${rowsPerSecond} rows/s.`,
    targets: [target('import rows/s with the list index (at least)', rowsPerSecond, 1000, true)],
  };
  return { 'read-units': readUnits, 'import-rate': importRate };
}
