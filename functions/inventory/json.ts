import type { InventoryItem } from './types';

/**
 * Serializes an entry. petId is written as its digits, unquoted, so int64 ids keep every digit (JSON.stringify of
 * a JavaScript number cannot). The digits come from `parsePetId` or DynamoDB, so they are a valid JSON number.
 */
export function inventoryItemJson(item: InventoryItem): string {
  return `{"petId":${item.petId},"quantity":${item.quantity},"status":"${item.status}"}`;
}

/** Serializes the list in one pass, with no intermediate objects. */
export function inventoryListJson(items: readonly InventoryItem[]): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    out += inventoryItemJson(items[i] as InventoryItem);
  }
  return `${out}]`;
}
