import type { InventoryItem } from './types';

/**
 * Serializes an entry. petId is written as its digits, unquoted, so int64 ids keep every digit (JSON.stringify of
 * a JavaScript number cannot). The digits come from `parsePetId` or DynamoDB, so they are a valid JSON number.
 */
export function inventoryItemJson(item: InventoryItem): string {
  return `{"petId":${item.petId},"quantity":${item.quantity},"status":"${item.status}"}`;
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
