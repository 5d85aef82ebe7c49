import { stringifyExactJson } from '../../client/index';
import type { HistoryEntry } from '../../functions/inventory/history';
import { HistoryTable } from '../../functions/store/history-table';
import { UsageError } from '../errors';
import { onTable } from '../target';
import { alignedColumns, type CommandContext, jsonArrayLines, petIdArgument, writeLine } from './context';

/** A date, or a date and time with seconds optional and a zone (Z or an offset): a time without a zone is ambiguous. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/** `inventory history PETID`: every recorded change of one pet's stock, oldest first. */
export async function inventoryHistory(context: CommandContext): Promise<void> {
  const { io, options } = context;
  const petId = petIdArgument(context.positionals[0]);
  const since = parseSince(options.since);

  const target = await context.target();
  const tableName = target.tables.history;
  const history = new HistoryTable({ client: target.client, tableName });
  const entries = await onTable(target, tableName, () => history.listFor(petId, since === undefined ? {} : { since }));
  io.stdout.write(
    options.format === 'json' ? jsonArrayLines(entries.map(historyEntryJson)) : historyTableText(entries),
  );
  const window = since === undefined ? '' : ` since ${since}`;
  writeLine(
    io.stderr,
    `${entries.length} ${entries.length === 1 ? 'change' : 'changes'} of petId ${petId}${window} in ${tableName} (${target.description}).`,
  );
}

/** `--since` as the ISO 8601 UTC text the history's `at` is compared with. @throws UsageError */
export function parseSince(raw: string | boolean | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const time = typeof raw === 'string' && ISO_8601.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(time))
    throw new UsageError(
      `--since must be an ISO 8601 date or date-time with a zone (2026-11-01, 2026-11-01T09:30:00Z); got "${String(raw)}"`,
    );
  return new Date(time).toISOString();
}

/** One entry as JSON, petId as its exact digits (a JSON number from a JS number could not keep an int64). */
export function historyEntryJson(entry: HistoryEntry): string {
  return stringifyExactJson({ ...entry, petId: BigInt(entry.petId) });
}

/**
 * Aligned columns for a terminal; `-` where there was nothing before (the entry was created), blank where the change
 * gave no reason, request id or reference. The reference, free text up to 255 characters, is last.
 */
export function historyTableText(entries: readonly HistoryEntry[]): string {
  const rows = [
    ['at', 'quantity', 'status', 'reason', 'source', 'actor', 'requestId', 'reference'],
    ...entries.map((entry) => [
      entry.at,
      `${entry.previousQuantity ?? '-'} -> ${entry.quantity}${entry.adjustBy === undefined ? '' : ` (${signed(entry.adjustBy)})`}`,
      `${entry.previousStatus ?? '-'} -> ${entry.status}`,
      entry.reason ?? '',
      entry.source,
      entry.actor,
      entry.requestId ?? '',
      entry.reference ?? '',
    ]),
  ];
  return alignedColumns(rows);
}

/** An adjustment's delta as staff write it: `+3`, `-1`. */
function signed(delta: number): string {
  return delta > 0 ? `+${delta}` : String(delta);
}
