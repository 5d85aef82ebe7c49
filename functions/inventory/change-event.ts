import type { HistoryEntry } from './history';
import { historyMembers } from './json';

/**
 * One change as the feed (`GET /inventory/changes`), the webhooks and the event bus carry it: the pet's history row,
 * its place in the feed and the entry's version after it.
 */
export interface ChangeEvent extends HistoryEntry {
  /** The change's feed sequence number as decimal digits: stable, unique, the same wherever the event appears. */
  id: string;
  /** The entry's version after this change: exactly one more than before it (1 for the change that created it). */
  version: number;
}

/**
 * An event's JSON (openapi.yaml, ChangeEvent): `id`, the petId as its int64 digits unquoted, `version`, then the
 * history entry's members as the history route writes them (`null` for a missing request id, reason or reference).
 */
export function changeEventJson(event: ChangeEvent): string {
  const members = JSON.stringify({ version: event.version, ...historyMembers(event) });
  return `{"id":${JSON.stringify(event.id)},"petId":${event.petId},${members.slice(1)}`;
}
