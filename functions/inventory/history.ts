import { isDeepStrictEqual } from 'node:util';
import type { ChangeOrigin, ChangeReason, ChangeSource, InventoryItem, PetStatus } from './types';

/** Who made a change; `unknown` when the writer put no {@link ChangeOrigin} of its own on the entry. */
export type HistorySource = ChangeSource | 'unknown';

/** One change of an inventory entry, as the history keeps it. */
export interface HistoryEntry {
  petId: string;
  /** When the writer made the change (ISO 8601 UTC). */
  at: string;
  /** null when the change created the entry. */
  previousQuantity: number | null;
  quantity: number;
  /** null when the change created the entry. */
  previousStatus: PetStatus | null;
  status: PetStatus;
  source: HistorySource;
  actor: string;
  requestId?: string;
  /** The delta of an adjustment (`{"adjustBy": n}`), as its writer stated it; absent when the quantity was set. */
  adjustBy?: number;
  /** Why, as the writer said; absent when it said nothing (never guessed). */
  reason?: ChangeReason;
  /** The document the change refers to, as the writer gave it; absent when it gave none. */
  reference?: string;
}

/** An entry as stored, with the origin its last writer put on it. */
export interface StoredEntry extends InventoryItem {
  origin?: ChangeOrigin;
}

/** One write of an entry, as the table's stream reports it. */
export interface EntryWrite {
  /** The entry before the write; undefined when the write created it. */
  before?: StoredEntry;
  /** The entry after the write; undefined when the write deleted it. */
  after?: StoredEntry;
  /** When DynamoDB recorded the write (ISO 8601 UTC): the time of a change whose writer said none. */
  recordedAt: string;
}

/**
 * The history row of a write; undefined when it changed neither quantity nor status, or deleted the entry. A writer
 * that left the previous origin on the entry is `unknown`, never credited with another's name.
 */
export function historyEntryFor(write: EntryWrite): HistoryEntry | undefined {
  const { before, after } = write;
  if (!after) return undefined;
  if (before && before.quantity === after.quantity && before.status === after.status) return undefined;
  const origin = after.origin && !isDeepStrictEqual(after.origin, before?.origin) ? after.origin : undefined;
  return {
    petId: after.petId,
    // A writer's clock string that is not a date would make the row's TTL NaN and the write fail: the stream's own.
    at: origin && !Number.isNaN(Date.parse(origin.at)) ? origin.at : write.recordedAt,
    previousQuantity: before?.quantity ?? null,
    quantity: after.quantity,
    previousStatus: before?.status ?? null,
    status: after.status,
    source: origin?.source ?? 'unknown',
    actor: origin?.actor ?? 'unknown',
    ...(origin?.requestId === undefined ? {} : { requestId: origin.requestId }),
    ...(origin?.adjustBy === undefined ? {} : { adjustBy: origin.adjustBy }),
    ...(origin?.reason === undefined ? {} : { reason: origin.reason }),
    ...(origin?.reference === undefined ? {} : { reference: origin.reference }),
  };
}

/** One change read from the table's stream: its row, its stream record's sequence number, the entry's version after it. */
export interface StreamChange {
  entry: HistoryEntry;
  sequenceNumber: string;
  /** Absent when the entry's writer counts no versions: the change is history, not on the feed. */
  version?: number;
}

/**
 * The storage port of the history: one row per change, keyed by the change's position in the table's stream, each
 * given the next place in the feed in the order given; a change recorded before keeps its row and its place.
 */
export interface HistoryRecorder {
  /** @throws IncompleteHistoryError naming how many of the changes, in order, are recorded */
  record(changes: readonly StreamChange[]): Promise<void>;
}

/** The first `recorded` changes are recorded and the rest are not (`cause`: why). */
export class IncompleteHistoryError extends Error {
  override readonly name = 'IncompleteHistoryError';
  constructor(
    readonly recorded: number,
    options: { cause: unknown },
  ) {
    super(`recorded ${recorded} changes, then failed: ${(options.cause as Error | undefined)?.message}`, options);
  }
}
