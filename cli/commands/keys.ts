import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiKeyScope, DEFAULT_API_KEY_SCOPE, generateApiKey } from '../../functions/api-keys/key';
import { AUTHORIZER_TIMEOUT_SECONDS } from '../../service/routes';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '../../service/stage-limits';
import { ApiKeyAdminTable } from '../api-key-admin-table';
import { CliError, UsageError } from '../errors';
import { onTable, type Target } from '../target';
import { alignedColumns, type CommandContext, writeLine } from './context';

const MAX_NAME_LENGTH = 100;

/** `keys create`: stores only the key's hash; the key is the last line of stdout, everything else goes to stderr. */
export async function createKey(context: CommandContext): Promise<void> {
  const name = context.options.name;
  if (typeof name !== 'string' || name.trim().length === 0)
    throw new UsageError('keys create needs --name NAME (who or what the key is for)');
  if (name.length > MAX_NAME_LENGTH || /\p{Cc}/u.test(name))
    throw new UsageError(`--name must be at most ${MAX_NAME_LENGTH} characters with no control characters`);
  const scope = (context.options.scope ?? DEFAULT_API_KEY_SCOPE) as ApiKeyScope;
  const target = await context.target();
  const { key, record } = generateApiKey(name, new Date(), scope);
  await withKeys(target, (keys) => keys.create(record));
  writeLine(
    context.io.stderr,
    `Created ${scope} API key ${record.keyId} "${name}" in ${target.tables.apiKeys} (${target.description}). ` +
      'Store it now: it is shown only this once, only its hash is kept.',
  );
  writeLine(context.io.stdout, key);
}

/** `keys list`: id, name, scope, created, revoked. Never the key (it is not stored) nor its hash. */
export async function listKeys(context: CommandContext): Promise<void> {
  const target = await context.target();
  const records = await withKeys(target, (keys) => keys.list());
  const rows = records.map(({ keyId, name, scope, createdAt, revokedAt = null }) => ({
    keyId,
    name,
    scope,
    createdAt,
    revokedAt,
  }));
  if (context.options.format === 'json') writeLine(context.io.stdout, JSON.stringify(rows));
  else if (rows.length > 0)
    context.io.stdout.write(
      alignedColumns([
        ['ID', 'NAME', 'SCOPE', 'CREATED', 'REVOKED'],
        ...rows.map((row) => [row.keyId, printable(row.name), row.scope, row.createdAt, row.revokedAt ?? '-']),
      ]),
    );
  // Where the keys were read, on stderr so that stdout stays the list alone (`--format json` piped to jq).
  const where = `${target.tables.apiKeys} (${target.description})`;
  writeLine(context.io.stderr, `${rows.length} API ${rows.length === 1 ? 'key' : 'keys'} in ${where}.`);
}

/** The longest an authorizer call already running can take (its function's time-out), and a margin. */
const IN_FLIGHT_AUTHORIZER_MS = (AUTHORIZER_TIMEOUT_SECONDS + 2) * 1000;

/** `keys revoke ID`: on a stage it also flushes the authorizer cache, twice; a failed flush exits 1. */
export async function revokeKey(context: CommandContext): Promise<void> {
  const [keyId] = context.positionals as [string];
  if (keyId.length === 0) throw new UsageError('keys revoke needs the key ID (see keys list)');
  const target = await context.target();
  const before = Date.now();
  const record = await withKeys(target, (keys) => keys.revoke(keyId));
  if (!record) throw new CliError(`No API key with id ${keyId} in ${target.tables.apiKeys} (${target.description})`);
  const already = Date.parse(record.revokedAt ?? '') < before;
  const key = `API key ${record.keyId} "${printable(record.name)}"`;
  const where = `(${target.tables.apiKeys}, ${target.description})`;
  writeLine(
    context.io.stdout,
    already
      ? `${key} was already revoked at ${record.revokedAt} ${where}.`
      : `Revoked ${key} at ${record.revokedAt} ${where}.`,
  );
  if (!target.flushAuthorizerCache) {
    writeLine(context.io.stdout, cacheNote(target));
    return;
  }
  const flush = async () => {
    try {
      await target.flushAuthorizerCache?.();
    } catch (error) {
      throw new CliError(
        `${(error as Error).message}. ${cacheNote(target)} Run keys revoke ${record.keyId} again to retry the flush.`,
        { cause: error },
      );
    }
  };
  await flush();
  // An authorizer call that read the key before the revocation was stored can still finish after this flush, and its
  // Allow would be cached for the TTL: flush again once every such call has ended (the authorizer's time-out).
  writeLine(
    context.io.stderr,
    `Flushed; flushing again in ${IN_FLIGHT_AUTHORIZER_MS / 1000} s, after any authorizer call already running has ended...`,
  );
  await (context.io.sleep ?? sleep)(IN_FLIGHT_AUTHORIZER_MS);
  await flush();
  writeLine(
    context.io.stdout,
    `Flushed the authorizer cache of the ${target.stage} API: the key is refused from the next request on.`,
  );
}

/** Says how long the revoked key may still be accepted where its cache was not flushed: a failed flush, `npm start`. */
export function cacheNote(target: Target): string {
  if (target.stage !== undefined)
    return `The ${target.stage} API keeps accepting this key for up to ${target.authorizerCacheTtlSeconds} s: the authorizer caches each key's answer for that long.`;
  return (
    'A running `npm start` keeps accepting this key until its authorizer cache expires ' +
    `(AUTHORIZER_CACHE_TTL_SECONDS, ${AUTHORIZER_CACHE_TTL_SECONDS} s by default): restart it to refuse the key now.`
  );
}

async function withKeys<T>(target: Target, action: (keys: ApiKeyAdminTable) => Promise<T>): Promise<T> {
  const tableName = target.tables.apiKeys;
  return onTable(target, tableName, () => action(new ApiKeyAdminTable({ client: target.client, tableName })));
}

/** Names are free text: keep control characters out of the operator's terminal. */
function printable(text: string): string {
  return text.replace(/\p{Cc}/gu, '?');
}
