import { randomUUID } from 'node:crypto';
import { type AttributeValue, CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { importActor } from '../cli/commands/inventory';
import { writeInventory } from '../cli/inventory/batch-writer';
import type { InventoryItem } from '../functions/inventory/types';
import { inventoryAttributes, signedInventoryAttributes } from '../functions/store/inventory-row';
import { InventoryTable } from '../functions/store/inventory-table';
import { columnsTable, type Target, targetAtMost } from './stats';

/** What one whole list consumed, for entries as a writer stores them. */
export interface ReadUnitsFigure {
  writer: string;
  entries: number;
  /** The pages the list read, whatever it read them with. */
  pages: number;
  units: number;
  unitsPerMillionEntries: number;
}

const importToItem = () => {
  const actor = importActor('stock.csv', process.env);
  return (item: InventoryItem) =>
    signedInventoryAttributes(item, { source: 'import', actor, at: new Date().toISOString() });
};

/**
 * The read units the list costs per entry, for entries as each writer stores them (what a writer adds to an item,
 * `lastChange`, should cost the list nothing). Read by the list's own adapter, paced at a rate it never reaches so
 * that every page asks for `ConsumedCapacity`, summed as DynamoDB (Local) reports it. The list is read twice on one
 * instance and the second is counted: what every list of a store costs once the instance has its bearings. One
 * table, each writer's pass replacing the previous one's items.
 */
export async function measureReadUnits(
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

/** Rows per second of an import (the CLI's writer, its default concurrency, rows signed as an import). */
export interface ImportRateFigure {
  table: string;
  entries: number;
  seconds: number;
  rowsPerSecond: number;
}

/**
 * What the list index costs an import on DynamoDB Local: the same entries written as `inventory import` writes them
 * into a table with the list index (`indexed`) and into a new one without, alternating twice; the best of each.
 */
export async function measureImportRate(
  client: DynamoDBClient,
  indexed: string,
  items: readonly InventoryItem[],
): Promise<ImportRateFigure[]> {
  const bare = `${indexed}-no-index`;
  await client.send(
    new CreateTableCommand({
      TableName: bare,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'petId', AttributeType: 'N' }],
      KeySchema: [{ AttributeName: 'petId', KeyType: 'HASH' }],
    }),
  );
  const toItem = importToItem();
  const seconds = new Map<string, number[]>([
    [indexed, []],
    [bare, []],
  ]);
  for (let round = 0; round < 2; round++) {
    for (const [tableName, times] of seconds) {
      const started = performance.now();
      await writeInventory(items, { client, tableName, toItem });
      times.push((performance.now() - started) / 1000);
    }
  }
  return [...seconds].map(([table, times]) => {
    const best = Math.min(...times);
    return {
      table: table === indexed ? 'with the list index' : 'without an index',
      entries: items.length,
      seconds: Math.round(best * 100) / 100,
      rowsPerSecond: Math.round(items.length / best),
    };
  });
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

export function importRateTable(importRate: readonly ImportRateFigure[]): string {
  return columnsTable(importRate, [
    ['table', (r) => r.table],
    ['entries', (r) => r.entries],
    ['seconds', (r) => r.seconds],
    ['rows/s', (r) => r.rowsPerSecond],
  ]);
}

export function readTargets(readUnits: readonly ReadUnitsFigure[], importRate: readonly ImportRateFigure[]): Target[] {
  const targets = readUnits.map((r) =>
    targetAtMost(`list read units per 1,000,000 entries written by ${r.writer}`, r.unitsPerMillionEntries, 10_000),
  );
  const indexed = importRate.find((figure) => figure.table === 'with the list index');
  if (indexed) {
    const floor = 1000;
    const value = indexed.rowsPerSecond;
    targets.push({ target: 'import rows/s with the list index (at least)', value, limit: floor, met: value >= floor });
  }
  return targets;
}
