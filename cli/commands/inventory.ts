import { randomUUID } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { createInventoryClient, InventoryApiError } from '../../client/index';
import { inventoryItemJson } from '../../functions/inventory/json';
import { INVENTORY_ITEM_FIELD_LIST, type InventoryItem } from '../../functions/inventory/types';
import { stackName } from '../../service/names';
import { CliError, UsageError } from '../errors';
import type { IncompleteWriteError } from '../inventory/batch-writer';
import { detectFormat, type ImportFormat, parseImport } from '../inventory/import-file';
import { importRows } from '../inventory/import-writer';
import { createProgress } from '../progress';
import { onTable, storageError } from '../target';
import {
  apiBaseUrl,
  apiKeyOption,
  apiUnreachable,
  type CommandContext,
  countOption,
  jsonArrayLines,
  petIdArgument,
  readInputFile,
  writeLine,
} from './context';

const MAX_CONCURRENCY = 64;

/** `inventory import FILE`: a bad row means nothing is written; production asks for `--yes`. */
export async function importInventory(context: CommandContext): Promise<void> {
  const { io, options } = context;
  const [file] = context.positionals as [string];
  const concurrency = countOption(options.concurrency, 'concurrency', MAX_CONCURRENCY);
  // Each row replaces its entry whole: an old export imported into production undoes every change the API made since.
  if (options.stage === 'production' && options['dry-run'] !== true && options.yes !== true) {
    throw new UsageError(
      'inventory import --stage production replaces each listed entry whole (changes made since the file was ' +
        'written are lost): check it with --dry-run, then run again with --yes',
    );
  }

  const text = await readInputFile(io, file);
  const chosen = (options.format as ImportFormat | undefined) ?? detectFormat(file, text);
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
  const started = Date.now();
  const progress = createProgress(io.stderr, items.length);
  const actor = importActor(file, io.env);
  const result = await onTable(target, tableName, async () => {
    try {
      return await importRows(items, {
        client: target.client,
        tableName,
        concurrency,
        origin: () => ({ source: 'import', actor, at: new Date().toISOString() }),
        onProgress: (done) => progress.update(done),
      });
    } catch (error) {
      const { written, total, cause } = error as IncompleteWriteError;
      throw new CliError(
        `Import stopped after ${written} of ${total} rows (${storageError(cause, target, tableName).message}); ` +
          'run the same command again to finish',
        { cause: error },
      );
    } finally {
      progress.finish();
    }
  });
  const seconds = Math.max(Date.now() - started, 1) / 1000;
  writeLine(
    io.stdout,
    `Imported ${items.length} rows from ${file} into ${tableName} (${target.description}) in ${seconds.toFixed(1)} s, ` +
      `${Math.round(items.length / seconds)} rows/s${result.unchanged > 0 ? `, ${result.unchanged} already as listed` : ''}.`,
  );
}

/** The history's actor of one import run: the file, user@host, and a run id that tells two runs apart. */
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

/** `inventory export`: every entry to stdout, read from `GET /inventory` (a list cut off fails the export). */
export async function exportInventory(context: CommandContext): Promise<void> {
  const key = apiKeyOption(context, 'inventory export');
  const url = await apiBaseUrl(context);
  const client = createInventoryClient({ baseUrl: url, apiKey: key });
  const listed = await readApi(context, url, '/inventory', () => client.GET('/inventory'), {
    what: `the whole list from ${url}/inventory`,
    lost: '; nothing was written',
  });
  const items = listed.map(inventoryItem);
  context.io.stdout.write(
    context.options.format === 'csv'
      ? inventoryCsv(items)
      : jsonArrayLines(items.map((item) => inventoryItemJson(item))),
  );
  writeLine(context.io.stderr, `Exported ${items.length} rows from ${url}/inventory.`);
}

/** `inventory get PETID`: one entry as JSON from `GET /inventory/{petId}`; no entry exits 1. */
export async function getInventoryEntry(context: CommandContext): Promise<void> {
  const petId = petIdArgument(context.positionals[0]);
  const key = apiKeyOption(context, 'inventory get');
  const url = await apiBaseUrl(context);
  const client = createInventoryClient({ baseUrl: url, apiKey: key });
  const path = `/inventory/${petId}`;
  const entry = await readApi(
    context,
    url,
    path,
    () => client.GET('/inventory/{petId}', { params: { path: { petId: BigInt(petId) } } }),
    { what: `${url}${path}`, lost: '' },
  );
  writeLine(context.io.stdout, inventoryItemJson(inventoryItem(entry)));
}

/** An entry as the API client reads it (petId a bigint), as the CLI writes it (petId its digits). */
function inventoryItem(entry: Omit<InventoryItem, 'petId'> & { petId: bigint }): InventoryItem {
  return { ...entry, petId: entry.petId.toString() };
}

/** The data of a GET of the API at `url`; each way it fails is one CliError line. */
async function readApi<T>(
  context: CommandContext,
  url: string,
  path: string,
  get: () => Promise<{ data?: T; error?: unknown; response: Response }>,
  failure: { what: string; lost: string },
): Promise<T> {
  const answer = await get().catch((error: unknown) => {
    const reason =
      apiUnreachable(context, url, error) ?? `could not read ${failure.what} (${(error as Error).message})`;
    throw new CliError(`${reason}${failure.lost}`, { cause: error });
  });
  if (answer.data === undefined)
    throw new CliError(
      `GET ${url}${path} answered ${new InventoryApiError(answer.error, answer.response.status).message}`,
    );
  return answer.data;
}

/** CSV with a header of the entry's fields, an absent optional one an empty cell (no field ever needs quoting). */
export function inventoryCsv(items: readonly InventoryItem[]): string {
  const names = INVENTORY_ITEM_FIELD_LIST.map(([name]) => name);
  let out = `${names.join(',')}\n`;
  for (const item of items) out += `${names.map((name) => item[name] ?? '').join(',')}\n`;
  return out;
}
