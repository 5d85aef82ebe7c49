import type { ChangeOrigin, InventoryItem, InventoryUpdate } from './types';

/**
 * The storage port of the inventory domain. Adapters translate storage facts into domain errors:
 * `InventoryItemNotFoundError` for a missing entry, `QuantityConflictError` for a compare-and-set that found another
 * quantity, `StorageUnavailableError` for throttling, time-outs and unreachable storage.
 */
export interface InventoryRepository {
  /** Every entry, ordered by petId ascending (numerically), read with strong consistency. */
  listAll(): Promise<InventoryItem[]>;
  /**
   * Sets the quantity of an existing entry, in one atomic write with `origin` (and only if the stored quantity is
   * `update.expectedQuantity`, when given), and returns the entry as stored; never creates one.
   */
  setQuantity(petId: string, update: InventoryUpdate, origin: ChangeOrigin): Promise<InventoryItem>;
}

/** Compares canonical decimal petIds numerically without converting them to numbers. */
export function comparePetIds(a: string, b: string): number {
  const aNegative = a.startsWith('-');
  const bNegative = b.startsWith('-');
  if (aNegative !== bNegative) return aNegative ? -1 : 1;
  const magnitude = a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
  return aNegative ? -magnitude : magnitude;
}
