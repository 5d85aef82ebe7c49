import type { HistoryEntry } from './history';
import { parseFieldMember, readItemFields } from './item-fields';
import { isJsonObject, type JsonWithLiterals } from './json-literals';
import { INVENTORY_ITEM_FIELD_LIST, type InventoryItem } from './types';

/** Serializes an entry in field order, an int64 as its digits unquoted (JSON.stringify of a number would round it). */
export function inventoryItemJson(item: InventoryItem): string {
  let json = '';
  for (const write of FIELD_WRITERS) json += write(item);
  return `${json}}`;
}

/** Each field's writer, its `{"name":` or `,"name":` made once: a list writes every entry through these. */
const FIELD_WRITERS = INVENTORY_ITEM_FIELD_LIST.map(([name, field], index): ((item: InventoryItem) => string) => {
  // The first field is the required petId, so the object always opens with it.
  const prefix = `${index === 0 ? '{' : ','}"${name}":`;
  // An enum's values are the table's own plain words: quoting is all their JSON needs.
  const write =
    field.kind === 'enum' ? (value: unknown) => `${prefix}"${value}"` : (value: unknown) => `${prefix}${value}`;
  return field.optional ? (item) => (item[name] === undefined ? '' : write(item[name])) : (item) => write(item[name]);
});

/** Reads an entry as {@link inventoryItemJson} writes it (fields in order, int64 digits exact); else undefined. */
export function readInventoryItem(json: JsonWithLiterals, value: unknown): InventoryItem | undefined {
  if (!isJsonObject(value)) return undefined;
  const given: string[] = INVENTORY_ITEM_FIELD_LIST.map(([name]) => name).filter((name) => Object.hasOwn(value, name));
  if (Object.keys(value).join() !== given.join()) return undefined;
  return readItemFields(
    (name, field) => (given.includes(name) ? parseFieldMember(json, value, name, field) : undefined),
    [],
  );
}

/** The list's JSON array, one chunk per batch, so a list of any size is never held as one string. */
export async function* inventoryListChunks(
  batches: AsyncIterable<readonly InventoryItem[]> | Iterable<readonly InventoryItem[]>,
): AsyncGenerator<string> {
  let opened = false;
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    let chunk = opened ? ',' : '[';
    opened = true;
    for (let i = 0; i < batch.length; i++) {
      if (i > 0) chunk += ',';
      chunk += inventoryItemJson(batch[i] as InventoryItem);
    }
    yield chunk;
  }
  yield opened ? ']' : '[]';
}

export function* batchesOf<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}

/**
 * A pet's changes as the history route answers them (openapi.yaml, HistoryEntry): no petId, `null` for a missing
 * request id, reason or reference; every number fits a JavaScript number, so JSON.stringify writes them.
 */
export function historyEntriesJson(entries: readonly HistoryEntry[]): string {
  return JSON.stringify(entries.map(historyMembers));
}

/** A history entry's members as the API writes them, in order; the change feed's events carry the same. */
export function historyMembers(entry: HistoryEntry) {
  return {
    at: entry.at,
    source: entry.source,
    actor: entry.actor,
    requestId: entry.requestId ?? null,
    quantity: entry.quantity,
    previousQuantity: entry.previousQuantity,
    ...(entry.adjustBy === undefined ? {} : { adjustBy: entry.adjustBy }),
    status: entry.status,
    previousStatus: entry.previousStatus,
    reason: entry.reason ?? null,
    reference: entry.reference ?? null,
  };
}
