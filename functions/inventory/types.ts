/** The states an inventory entry can be in. The spec defines no transitions between them. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;

/** Status of a pet, as the spec's PetStatus enumeration. */
export type PetStatus = (typeof PET_STATUSES)[number];

/** Largest quantity accepted (the int32 maximum: a stock count, not an identifier). */
export const MAX_QUANTITY = 2_147_483_647;

/** How a field of the entry is held, stored and written: the kinds the row mapping, the JSON and the CSV know. */
export type FieldKind =
  /** An int64 kept as its canonical decimal digits (JavaScript numbers are exact only to 2^53). */
  | { kind: 'int64' }
  /** An integer from `min` to `max` (0 refused when `nonZero`), which fits a JavaScript number. */
  | { kind: 'integer'; min: number; max: number; nonZero?: boolean }
  /** One of a fixed set of strings. */
  | { kind: 'enum'; values: readonly string[] };

/** A field of the entry: its kind, and whether an entry may leave it out (`optional`). */
export type ItemField = FieldKind & { optional?: true };

/**
 * The fields of one inventory entry, in the order the API writes them; the entry's type, row, JSON and the CLI's
 * files derive from it, and openapi.yaml's InventoryItem lists the same (test/unit/contract-sync.test.ts checks it).
 */
export const INVENTORY_ITEM_FIELDS = {
  /** ID of the pet: the service returns 9223372036854775807 with the same digits it received. */
  petId: { kind: 'int64' },
  quantity: { kind: 'integer', min: 0, max: MAX_QUANTITY },
  status: { kind: 'enum', values: PET_STATUSES },
  /**
   * One more with each change of the entry (1 for the change that created it), the number its change event carries;
   * a file to import may leave it out (the import continues the stored one), and an entry no writer of this service
   * has changed has none.
   */
  version: { kind: 'integer', min: 1, max: Number.MAX_SAFE_INTEGER, optional: true },
} as const satisfies Record<string, ItemField>;

type Fields = typeof INVENTORY_ITEM_FIELDS;

type FieldValue<F extends FieldKind> = F extends { kind: 'int64' }
  ? string
  : F extends { kind: 'integer' }
    ? number
    : F extends { values: readonly (infer V)[] }
      ? V
      : never;

type OptionalFieldName = {
  [Name in keyof Fields]: Fields[Name] extends { optional: true } ? Name : never;
}[keyof Fields];

/** One inventory entry, as {@link INVENTORY_ITEM_FIELDS} defines it. */
export type InventoryItem = {
  -readonly [Name in Exclude<keyof Fields, OptionalFieldName>]: FieldValue<Fields[Name]>;
} & { -readonly [Name in OptionalFieldName]?: FieldValue<Fields[Name]> };

/** The entry's field names and definitions, in order. */
export const INVENTORY_ITEM_FIELD_LIST = Object.entries(INVENTORY_ITEM_FIELDS) as [keyof Fields, ItemField][];

/** The validated body of `PATCH /inventory/{petId}`. */
export interface InventoryUpdate {
  quantity: number;
  /** Compare-and-set: apply only if the stored quantity is this. @default unconditional */
  expectedQuantity?: number;
}

/** The validated body of `PATCH /inventory/{petId}` that adjusts the stock by a delta instead of setting it. */
export interface InventoryAdjustment {
  /** Added to the stored quantity in one atomic write: an integer other than 0 within ±{@link MAX_QUANTITY}. */
  adjustBy: number;
}

/** What a PATCH asks: set the quantity (optionally compare-and-set) or adjust it by a delta. */
export type InventoryChange = InventoryUpdate | InventoryAdjustment;

/** Why a change was made, as a PATCH body or a batch's change may say (both optional, recorded as given). */
export interface ChangeNote {
  reason?: ChangeReason;
  reference?: string;
}

/** One change of `POST /inventory/changes`: its pet, what a PATCH body may say, and its note. */
export type PetChange = InventoryChange & ChangeNote & { petId: string };

/** What wrote a change: the API (a PATCH) or the operator CLI's import. */
export type ChangeSource = 'api' | 'import';

/** Why a change was made: the reasons a change may give (openapi.yaml, ChangeReason). */
export const CHANGE_REASONS = ['received', 'returned', 'sold', 'correction', 'loss', 'other'] as const;

export type ChangeReason = (typeof CHANGE_REASONS)[number];

/** Who and why, written with every change so that the stream record carries it to the history. */
export interface ChangeOrigin {
  source: ChangeSource;
  /** The API key id for the API; the operator run for an import. */
  actor: string;
  /** The API Gateway request id, where there is one. */
  requestId?: string;
  /** When the writer made the change (ISO 8601 UTC). */
  at: string;
  /** The delta of an adjustment (`{"adjustBy": n}`); absent when the writer set the quantity. */
  adjustBy?: number;
  /** Why the stock changed, as the writer said; absent when it said nothing (never guessed). */
  reason?: ChangeReason;
  /** The document the change refers to (a delivery note), as the writer gave it; absent when it gave none. */
  reference?: string;
  /** Names this change across its attempts (store/inventory-write.ts); absent, the store names each call's. */
  changeId?: string;
}

/** How long a change is recognized by its changeId: as long as an Idempotency-Key's first answer is kept. */
export const REPEATED_CHANGE_WINDOW_SECONDS = 24 * 60 * 60;

/** Smallest and largest int64, the range of a petId. */
export const MIN_PET_ID = -(2n ** 63n);
export const MAX_PET_ID = 2n ** 63n - 1n;

/** Returns whether `value` is one of the PetStatus strings. */
export function isPetStatus(value: unknown): value is PetStatus {
  return typeof value === 'string' && (PET_STATUSES as readonly string[]).includes(value);
}
