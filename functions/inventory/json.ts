import type { InventoryItem } from './types';

/**
 * Serializes an entry. petId is written as its digits, unquoted, so int64 ids keep every digit (JSON.stringify of
 * a JavaScript number cannot). The digits come from `parsePetId` or DynamoDB, so they are a valid JSON number.
 */
export function inventoryItemJson(item: InventoryItem): string {
  return `{"petId":${item.petId},"quantity":${item.quantity},"status":"${item.status}"}`;
}

/**
 * Serializes the list as a sequence of chunks of `entriesPerChunk` entries each (the first opens the array, the
 * last closes it), so a large list is never held as one string. Joined, the chunks are the JSON array of the entries.
 */
export function* inventoryListChunks(items: readonly InventoryItem[], entriesPerChunk: number): Generator<string> {
  if (items.length === 0) {
    yield '[]';
    return;
  }
  for (let start = 0; start < items.length; start += entriesPerChunk) {
    const end = Math.min(items.length, start + entriesPerChunk);
    let chunk = start === 0 ? '[' : ',';
    for (let i = start; i < end; i++) {
      if (i > start) chunk += ',';
      chunk += inventoryItemJson(items[i] as InventoryItem);
    }
    yield end === items.length ? `${chunk}]` : chunk;
  }
}
