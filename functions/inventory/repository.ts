import type { ChangeOrigin, InventoryAdjustment, InventoryItem, InventoryUpdate } from './types';

/**
 * The storage port of the inventory domain. Adapters translate storage facts into domain errors:
 * `InventoryItemNotFoundError` for a missing entry, `QuantityConflictError` for a compare-and-set that found another
 * quantity, `AdjustmentConflictError` for an adjustment out of range, `StorageUnavailableError` for throttling, time-outs and unreachable storage.
 */
export interface InventoryRepository {
  /** Every entry, ordered by petId ascending (numerically), read with strong consistency. */
  listAll(): Promise<InventoryItem[]>;
  /** One entry, read with strong consistency; undefined when the pet has none. */
  get(petId: string): Promise<InventoryItem | undefined>;
  /**
   * Sets the quantity of an existing entry, in one atomic write with `origin` (and only if the stored quantity is
   * `update.expectedQuantity`, when given), and returns the entry as stored; never creates one.
   */
  setQuantity(petId: string, update: InventoryUpdate, origin: ChangeOrigin): Promise<InventoryItem>;
  /**
   * Adds `adjustment.adjustBy` to the quantity of an existing entry in one atomic write with `origin` (which carries
   * the delta), only if the result stays from 0 to the largest quantity, and returns the entry as stored; never
   * creates one.
   */
  adjustQuantity(petId: string, adjustment: InventoryAdjustment, origin: ChangeOrigin): Promise<InventoryItem>;
}

/** Compares canonical decimal petIds numerically without converting them to numbers. */
export function comparePetIds(a: string, b: string): number {
  const aNegative = a.startsWith('-');
  const bNegative = b.startsWith('-');
  if (aNegative !== bNegative) return aNegative ? -1 : 1;
  const magnitude = a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
  return aNegative ? -magnitude : magnitude;
}
