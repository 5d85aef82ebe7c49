import type { ChangeOrigin, InventoryAdjustment, InventoryItem, InventoryUpdate } from './types';

/**
 * The storage port of the inventory domain. Adapters translate storage facts into domain errors:
 * `InventoryItemNotFoundError` for a missing entry, `QuantityConflictError` for a compare-and-set that found another
 * quantity, `AdjustmentConflictError` for an adjustment out of range, `StorageUnavailableError` for throttling, time-outs and unreachable storage.
 */
export interface InventoryRepository {
  /**
   * The entries in petId order (ascending, numerically), in batches as they are read, so a list of any size can be
   * sent as it comes; `after` and `limit` select a page. Eventually consistent: a write acknowledged a moment ago
   * may not be listed yet. A storage failure rejects the batch it happens in.
   */
  list(options?: ListOptions): AsyncIterable<readonly InventoryItem[]>;
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

/** Which entries {@link InventoryRepository.list} gives. */
export interface ListOptions {
  /** Only entries with a petId greater than this one (a canonical decimal int64). */
  after?: string;
  /** At most this many entries. @default all */
  limit?: number;
}

/** Compares canonical decimal petIds numerically without converting them to numbers. */
export function comparePetIds(a: string, b: string): number {
  const aNegative = a.startsWith('-');
  const bNegative = b.startsWith('-');
  if (aNegative !== bNegative) return aNegative ? -1 : 1;
  const magnitude = a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
  return aNegative ? -magnitude : magnitude;
}
