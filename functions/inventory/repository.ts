import type { ChangeOrigin, InventoryAdjustment, InventoryItem, InventoryUpdate } from './types';

/** The storage port of the inventory: adapters throw the domain errors of functions/inventory/errors.ts. */
export interface InventoryRepository {
  /** The entries in petId order, in batches as read; eventually consistent. */
  list(options?: ListOptions): AsyncIterable<readonly InventoryItem[]>;
  /** One entry, read with strong consistency; undefined when the pet has none. */
  get(petId: string): Promise<InventoryItem | undefined>;
  /** Sets an existing entry's quantity (if it is `expectedQuantity`, when given) with `origin`; never creates one. */
  setQuantity(petId: string, update: InventoryUpdate, origin: ChangeOrigin): Promise<InventoryItem>;
  /** Adds `adjustBy` to an existing entry's quantity if the result stays in range; never creates one. */
  adjustQuantity(petId: string, adjustment: InventoryAdjustment, origin: ChangeOrigin): Promise<InventoryItem>;
}

/** Which entries {@link InventoryRepository.list} gives. */
export interface ListOptions {
  /** Only entries with a petId greater than this one (a canonical decimal int64). */
  after?: string;
  /** At most this many entries. @default all */
  limit?: number;
}
