import {
  type ChangeEvent,
  createInventoryClient,
  InventoryApiError,
  inventoryChangePages,
  stringifyExactJson,
} from '../../client/index';
import { CliError } from '../errors';
import { apiBaseUrl, apiKeyOption, apiUnreachable, type CommandContext, countOption, writeLine } from './context';

/** The feed's page size bounds (docs/api.md, `GET /inventory/changes`). */
const MAX_LIMIT = 1000;

/**
 * `inventory changes`: every change from `--cursor` (else the oldest kept) to the feed's end, one line each; with
 * `--follow`, then each change as it is made, until Ctrl-C. The cursor to resume from always ends on stderr.
 */
export async function inventoryChanges(context: CommandContext): Promise<void> {
  const { io, options } = context;
  const limit = countOption(options.limit, 'limit', MAX_LIMIT);
  const follow = options.follow === true;
  const key = apiKeyOption(context, 'inventory changes');
  const url = await apiBaseUrl(context);
  const client = createInventoryClient({ baseUrl: url, apiKey: key });
  const signal = follow ? io.interruptSignal?.() : undefined;
  const write = options.format === 'json' ? stringifyExactJson : changeLine;
  let cursor = typeof options.cursor === 'string' ? options.cursor : undefined;
  let count = 0;
  if (follow) writeLine(io.stderr, `Following ${url}/inventory/changes; Ctrl-C to stop.`);
  try {
    for await (const page of inventoryChangePages(client, { cursor, limit, follow, signal })) {
      for (const event of page.events) writeLine(io.stdout, write(event));
      count += page.events.length;
      cursor = page.cursor;
    }
  } catch (error) {
    throw new CliError(`${feedFailure(context, url, error)}; ${resumeHint(cursor)}`, { cause: error });
  }
  const changes = `${count} ${count === 1 ? 'change' : 'changes'}`;
  writeLine(io.stderr, `${changes} from ${url}/inventory/changes; ${resumeHint(cursor)}`);
}

/** Where to go on from: the last cursor read, else the feed's start (no page was read). */
function resumeHint(cursor: string | undefined): string {
  return cursor === undefined
    ? 'no page read: run again to start from the oldest change'
    : `resume with --cursor ${cursor}`;
}

/** One event on one line: when, its id, the pet and version, from what to what, why, who, and the reference last. */
export function changeLine(event: ChangeEvent): string {
  const delta = event.adjustBy === undefined ? '' : ` (${event.adjustBy > 0 ? '+' : ''}${event.adjustBy})`;
  return [
    event.at,
    event.id,
    `petId ${event.petId}`,
    `v${event.version}`,
    `${event.previousQuantity ?? '-'} -> ${event.quantity}${delta}`,
    `${event.previousStatus ?? '-'} -> ${event.status}`,
    event.reason ?? '-',
    event.source,
    event.actor,
    ...(event.reference ? [event.reference] : []),
  ].join('  ');
}

function feedFailure(context: CommandContext, url: string, error: unknown): string {
  if (error instanceof InventoryApiError) return `GET ${url}/inventory/changes answered ${error.message}`;
  return apiUnreachable(context, url, error) ?? `could not read ${url}/inventory/changes (${(error as Error).message})`;
}
