/** The states an inventory entry can be in. The spec defines no transitions between them. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;

/** Status of a pet, as the spec's PetStatus enumeration. */
export type PetStatus = (typeof PET_STATUSES)[number];

/**
 * One inventory entry.
 *
 * `petId` is an int64 kept as its canonical decimal digits: JavaScript numbers are exact only to 2^53, and the
 * service must return 9223372036854775807 with the same digits it received.
 */
export interface InventoryItem {
  petId: string;
  quantity: number;
  status: PetStatus;
}

/** The validated body of `PATCH /inventory/{petId}`. */
export interface InventoryUpdate {
  quantity: number;
}

/** Largest quantity accepted (the int32 maximum: a stock count, not an identifier). */
export const MAX_QUANTITY = 2_147_483_647;

/** Smallest and largest int64, the range of a petId. */
export const MIN_PET_ID = -(2n ** 63n);
export const MAX_PET_ID = 2n ** 63n - 1n;

/** Returns whether `value` is one of the PetStatus strings. */
export function isPetStatus(value: unknown): value is PetStatus {
  return typeof value === 'string' && (PET_STATUSES as readonly string[]).includes(value);
}
