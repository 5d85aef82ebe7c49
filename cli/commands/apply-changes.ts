import { randomUUID } from 'node:crypto';
import { batchesOf } from '../../functions/inventory/json';
import { MAX_CHANGES } from '../../functions/inventory/update';
import { InventoryTable } from '../../functions/store/inventory-table';
import { CliError } from '../errors';
import { type LocatedChange, parseChangeFile } from '../inventory/change-file';
import { onTable, storageError, type Target } from '../target';
import { type CommandContext, readInputFile, writeLine } from './context';
import { importActor } from './inventory';

/**
 * `inventory apply FILE`: every row checked first (a bad row means nothing is applied), then the changes in atomic
 * batches of {@link MAX_CHANGES}, as `POST /inventory/changes` applies them; a failed batch stops the run.
 */
export async function applyInventoryChanges(context: CommandContext): Promise<void> {
  const { io } = context;
  const [file] = context.positionals as [string];
  const { changes, problems } = parseChangeFile(await readInputFile(io, file));
  if (problems.length > 0) {
    for (const problem of problems) writeLine(io.stderr, `${file}:${problem.line}: ${problem.message}`);
    throw new CliError(
      `${problems.length} bad ${problems.length === 1 ? 'row' : 'rows'} in ${file}; nothing was applied`,
    );
  }
  const batches = [...batchesOf(changes, MAX_CHANGES)];
  if (context.options['dry-run'] === true) {
    writeLine(
      io.stdout,
      `Dry run: ${changes.length} valid changes in ${file} (${batchCount(batches)}); nothing was applied.`,
    );
    return;
  }
  const target = await context.target();
  const tableName = target.tables.inventory;
  const table = new InventoryTable({ client: target.client, tableName });
  const actor = importActor(file, io.env);
  await onTable(target, tableName, async () => {
    for (const [index, batch] of batches.entries()) {
      // One change id per batch: an SDK retry of its transaction after a lost answer applies it once.
      const origin = { source: 'import' as const, actor, at: new Date().toISOString(), changeId: randomUUID() };
      await table
        .applyChanges(
          batch.map(({ change }) => change),
          origin,
        )
        .catch((error: unknown) => {
          throw new CliError(batchFailure(batches, index, failureReason(error, batch, target, tableName)), {
            cause: error,
          });
        });
    }
  });
  writeLine(
    io.stdout,
    `Applied ${changes.length} changes from ${file} to ${tableName} (${target.description}) in ${batchCount(batches)}.`,
  );
}

function batchCount(batches: readonly unknown[]): string {
  return `${batches.length} ${batches.length === 1 ? 'batch' : 'batches'} of up to ${MAX_CHANGES}`;
}

/** Batches `from` to `to` (indexes, both included) and the lines they span: `batches 1–2 (lines 2–201)`. */
function span(batches: readonly LocatedChange[][], from: number, to: number): string {
  const numbers = from === to ? `batch ${from + 1}` : `batches ${from + 1}–${to + 1}`;
  return `${numbers} (lines ${batches[from]?.[0]?.line}–${batches[to]?.at(-1)?.line})`;
}

/**
 * Which batch failed and why, and which batches were applied before it and which were not. A refused change leaves
 * its batch unapplied; after a storage failure the transaction may have run (its answer lost), whole or not at all.
 */
function batchFailure(
  batches: readonly LocatedChange[][],
  index: number,
  failure: { reason: string; refused: boolean },
): string {
  const last = batches.length - 1;
  const applied = index === 0 ? 'no batch was applied' : `${span(batches, 0, index - 1)} applied`;
  const notApplied = index === last ? '' : `, ${span(batches, index + 1, last)} not applied`;
  const failed = `batch ${index + 1} of ${batches.length} (lines ${batches[index]?.[0]?.line}–${batches[index]?.at(-1)?.line})`;
  const outcome = failure.refused ? 'nothing of it applied' : 'unknown whether it was applied (whole or not at all)';
  return `${failed} failed, ${outcome}: ${failure.reason}; ${applied}${notApplied}`;
}

/** A batch's refusal, its change (`changes[i]` to the store) named by its line, or why storage failed. */
function failureReason(error: unknown, batch: readonly LocatedChange[], target: Target, tableName: string) {
  const message = (error as Error)?.message ?? '';
  const change = /^changes\[(\d+)\]/.exec(message);
  if (change === null) return { reason: storageError(error, target, tableName).message, refused: false };
  const line = batch[Number(change[1])]?.line;
  return { reason: `line ${line}${message.slice(change[0].length).replace(/\.$/, '')}`, refused: true };
}
