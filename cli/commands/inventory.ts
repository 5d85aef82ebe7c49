import { randomUUID } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { createInventoryClient, InventoryApiError } from '../../client/index';
import { inventoryItemJson } from '../../functions/inventory/json';
import type { InventoryItem } from '../../functions/inventory/types';
import { signedInventoryAttributes } from '../../functions/store/inventory-row';
import { stackName } from '../../service/names';
import { CliError, UsageError } from '../errors';
import { IncompleteWriteError, writeInventory } from '../inventory/batch-writer';
import { detectFormat, IMPORT_FORMATS, type ImportFormat, parseImport } from '../inventory/import-file';
import { createProgress } from '../progress';
import { requireTable, storageError } from '../target';
import { apiBaseUrl, apiKeyOption, apiUnreachable, type CommandContext, readInputFile, writeLine } from './context';

const EXPORT_FORMATS = ['json', 'csv'] as const;
const MAX_CONCURRENCY = 64;

/**
 * `inventory import FILE [--format csv|json] [--dry-run] [--concurrency N] [--yes]`: validates every row first; any bad
 * row means all bad rows are listed (stderr) and nothing is written. Then writes with BatchWriteItem; re-running
 * the same file leaves the same stock. Each row carries who and why (`lastChange`: this run of this operator) for
 * the history, which records the rows whose quantity or status changed and skips the rest. Into production it asks
 * for `--yes` (a dry run excepted).
 */
export async function importInventory(context: CommandContext): Promise<void> {
  const { io, options } = context;
  const file = context.positionals[0];
  if (file === undefined) throw new UsageError('inventory import needs a FILE (CSV or a JSON array)');
  const format = options.format;
  if (format !== undefined && !(IMPORT_FORMATS as readonly unknown[]).includes(format))
    throw new UsageError(`--format must be one of ${IMPORT_FORMATS.join(', ')}; got "${String(format)}"`);
  const concurrency = parseConcurrency(options.concurrency);
  // Each row replaces its entry whole: an old export imported into production undoes every change the API made since.
  if (options.stage === 'production' && options['dry-run'] !== true && options.yes !== true) {
    throw new UsageError(
      'inventory import --stage production replaces each listed entry whole (changes made since the file was ' +
        'written are lost): check it with --dry-run, then run again with --yes',
    );
  }

  const text = await readInputFile(io, file);
  const chosen = (format as ImportFormat | undefined) ?? detectFormat(file, text);
  const { items, problems } = parseImport(text, chosen);
  if (problems.length > 0) {
    for (const problem of problems) writeLine(io.stderr, `${file}:${problem.line}: ${problem.message}`);
    throw new CliError(
      `${problems.length} bad ${problems.length === 1 ? 'row' : 'rows'} in ${file} (${chosen}); nothing was written`,
    );
  }
  if (options['dry-run'] === true) {
    writeLine(io.stdout, `Dry run: ${items.length} valid rows in ${file} (${chosen}); nothing was written.`);
    return;
  }

  const target = await context.target();
  const tableName = target.tables.inventory;
  // The same guard when production's table is reached another way (--endpoint with its table name).
  if (tableName.startsWith(`${stackName('production')}-`) && options.yes !== true) {
    throw new UsageError(
      `${tableName} is production's inventory table: each listed entry is replaced whole; run again with --yes`,
    );
  }
  await requireTable(target, tableName);
  const now = io.now ?? Date.now;
  const started = now();
  const progress = createProgress(io.stderr, items.length, { now });
  try {
    const actor = importActor(file, io.env);
    const result = await writeInventory(items, {
      client: target.client,
      tableName,
      concurrency,
      toItem: (item) => signedInventoryAttributes(item, { source: 'import', actor, at: new Date().toISOString() }),
      onProgress: (written) => progress.update(written),
    });
    progress.finish();
    const seconds = Math.max(now() - started, 1) / 1000;
    writeLine(
      io.stdout,
      `Imported ${result.written} rows from ${file} into ${tableName} (${target.description}) in ${seconds.toFixed(1)} s, ` +
        `${Math.round(result.written / seconds)} rows/s${result.retries > 0 ? `, ${result.retries} retried batches` : ''}.`,
    );
  } catch (error) {
    progress.finish();
    if (error instanceof IncompleteWriteError) {
      const reason = storageError(error.cause, target, tableName).message;
      throw new CliError(
        `Import stopped after ${error.written} of ${error.total} rows (${reason}); run the same command again to finish`,
        { cause: error },
      );
    }
    throw storageError(error, target, tableName);
  }
}

/**
 * The history's actor of one import run: the file, the operator (OS user at host) and a run id, so that two runs of
 * the same file are told apart.
 */
export function importActor(file: string, env: Record<string, string | undefined>): string {
  let user = env.USER ?? env.LOGNAME;
  if (!user) {
    try {
      user = userInfo().username;
    } catch {
      user = 'unknown';
    }
  }
  return `import ${file} by ${user}@${hostname()} run ${randomUUID()}`;
}

/**
 * `inventory export --key KEY [--url URL | --stage S] [--format json|csv]`: every entry to stdout, ordered by petId,
 * int64 ids exact. It reads `GET /inventory` of the API with the typed client, as any client would: the streamed,
 * gzipped list (fetch decodes gzip), with no table access needed. A list cut off mid-stream fails the export.
 */
export async function exportInventory(context: CommandContext): Promise<void> {
  const format = context.options.format ?? 'json';
  if (!(EXPORT_FORMATS as readonly unknown[]).includes(format))
    throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}; got "${String(format)}"`);
  const key = apiKeyOption(context, 'inventory export');
  const url = await apiBaseUrl(context);
  const client = createInventoryClient({ baseUrl: url, apiKey: key });
  const listed = await client.GET('/inventory').catch((error: unknown) => {
    const unreachable = apiUnreachable(context, url, error);
    throw new CliError(
      unreachable
        ? `${unreachable}; nothing was written`
        : `could not read the whole list from ${url}/inventory (${(error as Error).message}); nothing was written`,
      { cause: error },
    );
  });
  if (!listed.data) {
    // The Error body's code and message, or (API Gateway's own 413 is plain text) an excerpt of what came.
    throw new CliError(
      `GET ${url}/inventory answered ${new InventoryApiError(listed.error, listed.response.status).message}`,
    );
  }
  const items: InventoryItem[] = listed.data.map((item) => ({
    petId: item.petId.toString(),
    quantity: item.quantity,
    status: item.status,
  }));
  context.io.stdout.write(format === 'csv' ? inventoryCsv(items) : inventoryJsonLines(items));
  writeLine(context.io.stderr, `Exported ${items.length} rows from ${url}/inventory.`);
}

/**
 * `inventory get PETID --key KEY [--url URL]`: one entry as JSON (`GET /inventory/{petId}` of the API, strongly
 * consistent), its petId with every digit. A pet without an entry exits 1.
 */
export async function getInventoryEntry(context: CommandContext): Promise<void> {
  const raw = context.positionals[0];
  if (raw === undefined || !/^-?[0-9]+$/.test(raw))
    throw new UsageError(`inventory get needs a PETID, a decimal integer; got "${String(raw ?? '')}"`);
  const key = apiKeyOption(context, 'inventory get');
  const url = await apiBaseUrl(context);
  const client = createInventoryClient({ baseUrl: url, apiKey: key });
  const petId = BigInt(raw);
  const answer = await client.GET('/inventory/{petId}', { params: { path: { petId } } }).catch((error: unknown) => {
    const unreachable = apiUnreachable(context, url, error);
    throw new CliError(unreachable ?? `could not read ${url}/inventory/${raw} (${(error as Error).message})`, {
      cause: error,
    });
  });
  if (!answer.data) {
    throw new CliError(
      `GET ${url}/inventory/${raw} answered ${new InventoryApiError(answer.error, answer.response.status).message}`,
    );
  }
  const { data } = answer;
  writeLine(
    context.io.stdout,
    inventoryItemJson({ petId: data.petId.toString(), quantity: data.quantity, status: data.status }),
  );
}

/** A JSON array with one entry per line: diffs well, and import errors name a useful line. */
export function inventoryJsonLines(items: readonly InventoryItem[]): string {
  if (items.length === 0) return '[]\n';
  return `[\n${items.map((item) => `  ${inventoryItemJson(item)}`).join(',\n')}\n]\n`;
}

/** CSV with the header petId,quantity,status (no field ever needs quoting). */
export function inventoryCsv(items: readonly InventoryItem[]): string {
  let out = 'petId,quantity,status\n';
  for (const item of items) out += `${item.petId},${item.quantity},${item.status}\n`;
  return out;
}

function parseConcurrency(raw: string | boolean | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (typeof raw !== 'string' || !/^[0-9]+$/.test(raw) || value < 1 || value > MAX_CONCURRENCY)
    throw new UsageError(`--concurrency must be an integer from 1 to ${MAX_CONCURRENCY}; got "${String(raw)}"`);
  return value;
}
