import { ValidationError } from '../../functions/inventory/errors';
import type { HistoryEntry } from '../../functions/inventory/history';
import { parsePetId } from '../../functions/inventory/pet-id';
import { CliError, UsageError } from '../errors';
import { HistoryReader } from '../history-reader';
import { requireTable, storageError } from '../target';
import { type CommandContext, writeLine } from './context';

const HISTORY_FORMATS = ['table', 'json'] as const;
/** A date, or a date and time with seconds optional and a zone (Z or an offset): a time without a zone is ambiguous. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/**
 * `inventory history PETID [--since ISO] [--format table|json]`: every recorded change of one pet's stock, oldest
 * first (the order DynamoDB made them in), from the history table the history function writes.
 */
export async function inventoryHistory(context: CommandContext): Promise<void> {
  const { io, options } = context;
  let petId: string;
  try {
    petId = parsePetId(context.positionals[0]);
  } catch (error) {
    if (error instanceof ValidationError) throw new UsageError(`PETID: ${error.message.replace(/\.$/, '')}`);
    throw error;
  }
  const format = options.format ?? 'table';
  if (!(HISTORY_FORMATS as readonly unknown[]).includes(format))
    throw new UsageError(`--format must be one of ${HISTORY_FORMATS.join(', ')}; got "${String(format)}"`);
  const since = parseSince(options.since);

  const target = await context.target();
  const tableName = target.tables.history;
  if (!tableName)
    throw new CliError(`${target.description} has no history table output: redeploy the stack with this version`);
  await requireTable(target, tableName);
  let entries: HistoryEntry[];
  try {
    entries = await new HistoryReader({ client: target.client, tableName }).listFor(
      petId,
      since === undefined ? {} : { since },
    );
  } catch (error) {
    throw storageError(error, target, tableName);
  }
  io.stdout.write(format === 'json' ? historyJsonLines(entries) : historyTableText(entries));
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

/** One entry as JSON, petId as its exact digits (JSON.stringify of a number could not keep an int64). */
export function historyEntryJson(entry: HistoryEntry): string {
  const members = [
    `"petId":${entry.petId}`,
    `"at":${JSON.stringify(entry.at)}`,
    `"previousQuantity":${entry.previousQuantity ?? 'null'}`,
    `"quantity":${entry.quantity}`,
    `"previousStatus":${JSON.stringify(entry.previousStatus)}`,
    `"status":${JSON.stringify(entry.status)}`,
    `"source":${JSON.stringify(entry.source)}`,
    `"actor":${JSON.stringify(entry.actor)}`,
  ];
  if (entry.requestId !== undefined) members.push(`"requestId":${JSON.stringify(entry.requestId)}`);
  if (entry.adjustBy !== undefined) members.push(`"adjustBy":${entry.adjustBy}`);
  return `{${members.join(',')}}`;
}

/** A JSON array with one entry per line, as `inventory export` writes. */
export function historyJsonLines(entries: readonly HistoryEntry[]): string {
  if (entries.length === 0) return '[]\n';
  return `[\n${entries.map((entry) => `  ${historyEntryJson(entry)}`).join(',\n')}\n]\n`;
}

/** Aligned columns for a terminal; `-` where there was nothing before (the entry was created). */
export function historyTableText(entries: readonly HistoryEntry[]): string {
  const rows = [
    ['at', 'quantity', 'status', 'source', 'actor', 'requestId'],
    ...entries.map((entry) => [
      entry.at,
      `${entry.previousQuantity ?? '-'} -> ${entry.quantity}${entry.adjustBy === undefined ? '' : ` (${signed(entry.adjustBy)})`}`,
      `${entry.previousStatus ?? '-'} -> ${entry.status}`,
      entry.source,
      entry.actor,
      entry.requestId ?? '',
    ]),
  ];
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  const lines = rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
  return `${lines.join('\n')}\n`;
}

/** An adjustment's delta as staff write it: `+3`, `-1`. */
function signed(delta: number): string {
  return delta > 0 ? `+${delta}` : String(delta);
}
