import type { ChangeNote, ChangeOrigin, InventoryChange, InventoryItem, PetChange } from './types';

/** The storage port of the inventory: adapters throw the domain errors of functions/inventory/errors.ts. */
export interface InventoryRepository {
  /** The entries in petId order, in batches as read; eventually consistent. */
  list(options?: ListOptions): AsyncIterable<readonly InventoryItem[]>;
  /** One entry, read with strong consistency; undefined when the pet has none. */
  get(petId: string): Promise<InventoryItem | undefined>;
  /**
   * Sets an existing entry's quantity (if it is `expectedQuantity`, when given), or adds `adjustBy` to it if the result
   * stays in range, signed with `origin`; never creates an entry.
   */
  applyChange(petId: string, change: InventoryChange & ChangeNote, origin: ChangeOrigin): Promise<InventoryItem>;
  /**
   * Applies every change or none (one transaction) and answers the entries as read right after, in order; a change
   * that cannot be applied throws its PATCH's error, naming its position (errors.ts, `atChange`).
   */
  applyChanges(changes: readonly PetChange[], origin: ChangeOrigin): Promise<InventoryItem[]>;
}

/** Which entries {@link InventoryRepository.list} gives. */
export interface ListOptions {
  /** Only entries with a petId greater than this one (a canonical decimal int64). */
  after?: string;
  /** At most this many entries. @default all */
  limit?: number;
}
