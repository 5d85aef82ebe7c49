import { type FieldKind, INVENTORY_ITEM_FIELD_LIST, type InventoryItem } from './types';

/**
 * Serializes an entry, its fields in {@link INVENTORY_ITEM_FIELD_LIST}'s order. An int64 is written as its digits,
 * unquoted, so it keeps every digit (JSON.stringify of a JavaScript number cannot); the digits come from
 * `parsePetId` or DynamoDB, so they are a valid JSON number.
 */
export function inventoryItemJson(item: InventoryItem): string {
  let json = '';
  for (const [name, field] of INVENTORY_ITEM_FIELD_LIST) {
    json += `${json === '' ? '{' : ','}"${name}":${fieldJson(field, item[name])}`;
  }
  return `${json}}`;
}

function fieldJson(field: FieldKind, value: string | number): string {
  return field.kind === 'enum' ? JSON.stringify(value) : String(value);
}

/**
 * Serializes the list from its batches, one chunk per batch (the first opens the array, the last closes it), so a
 * list of any size is never held as one string. Joined, the chunks are the JSON array of the entries.
 */
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

/** Splits entries into batches of `size`. */
export function* batchesOf<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}
