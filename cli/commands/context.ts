import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { checkedBaseUrl } from '../../client/index';
import { parsePetId } from '../../functions/inventory/pet-id';
import { CliError, UsageError } from '../errors';
import type { CliIo } from '../io';
import { type Target, unreachableCode } from '../target';

/** What a command receives from `run`: its parsed arguments, the I/O, and the target (resolved on first use). */
export interface CommandContext {
  io: CliIo;
  /** An option with values listed in the command's usage (`--format text|json`) holds one of them. */
  options: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** Resolves where the command acts; commands that need no table (a dry run) never call it. */
  target(): Promise<Target>;
}

/** An input file's text. @throws CliError with the system's reason: `Cannot read the source map x.map: ENOENT` */
export async function readInputFile(io: CliIo, file: string, what?: string): Promise<string> {
  try {
    return await readFile(resolve(io.cwd, file), 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new CliError(`Cannot read ${what === undefined ? '' : `${what} `}${file}: ${reason}`);
  }
}

/** The PETID argument, checked with the API's own rule; its canonical digits. @throws UsageError */
export function petIdArgument(raw: string | undefined): string {
  try {
    return parsePetId(raw);
  } catch (error) {
    throw new UsageError(`PETID: ${(error as Error).message.replace(/\.$/, '')}`);
  }
}

/** A JSON array with one element per line: diffs well, and an import error names a useful line. */
export function jsonArrayLines(elements: readonly string[]): string {
  if (elements.length === 0) return '[]\n';
  return `[\n${elements.map((element) => `  ${element}`).join(',\n')}\n]\n`;
}

/** Rows as aligned columns for a terminal, two spaces apart. */
export function alignedColumns(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  const lines = rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd(),
  );
  return `${lines.join('\n')}\n`;
}

export function writeLine(stream: CliIo['stdout'], line: string): void {
  stream.write(`${line}\n`);
}

/** The API key a command calling the API uses: `--key`, else `PETSTORE_API_KEY`. @throws UsageError without one */
export function apiKeyOption(context: CommandContext, command: string): string {
  const key = typeof context.options.key === 'string' ? context.options.key : context.io.env.PETSTORE_API_KEY;
  if (!key) throw new UsageError(`${command} needs --key KEY (or PETSTORE_API_KEY): an API key of the stage`);
  return key;
}

/** The API's base URL: `--url`, else the stage's `ApiUrl` output, else the local `npm start` gateway. */
export async function apiBaseUrl(context: CommandContext): Promise<string> {
  if (typeof context.options.url === 'string') return checkedApiUrl(context.options.url);
  if (typeof context.options.stage === 'string') {
    const target = await context.target();
    return (target.apiUrl as string).replace(/\/+$/, '');
  }
  return `http://127.0.0.1:${context.io.env.PORT || 3000}/v1`;
}

/** Why a call got no answer at all (`TypeError: fetch failed` with a network code), else undefined. */
export function apiUnreachable(context: CommandContext, url: string, error: unknown): string | undefined {
  // By name, not instanceof: fetch's TypeError may come from another realm (a test runner's VM context).
  if ((error as Error)?.name !== 'TypeError' || (error as Error).message !== 'fetch failed') return undefined;
  const code = unreachableCode(error);
  if (code === undefined) return undefined;
  const local = typeof context.options.url !== 'string' && typeof context.options.stage !== 'string';
  const hint = local ? ': is `npm start` running? (PORT, or pass --url / --stage)' : '';
  return `could not reach ${url} (${code})${hint}`;
}

/** A `--url` a key may be sent to: ending in /v1, HTTPS unless the host is this machine. @throws UsageError */
export function checkedApiUrl(url: string): string {
  if (!/^https?:\/\/[^\s]+$/.test(url)) throw new UsageError(`--url must be an http(s) URL; got "${url}"`);
  // The key goes in a header: over plain HTTP anyone on the path reads it. Only this machine is exempt.
  if (url.startsWith('http:') && !isLoopback(url))
    throw new UsageError(`--url must be https:// (the API key would cross the network in clear); got "${url}"`);
  try {
    return checkedBaseUrl(url);
  } catch {
    throw new UsageError(`--url must be the API's base URL, ending in /v1 (the stack's ApiUrl output); got "${url}"`);
  }
}

/** Whether a URL's host is this machine (localhost, 127.0.0.0/8, ::1). */
function isLoopback(url: string): boolean {
  const host = URL.parse(url)?.hostname ?? '';
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** An option that counts (`--limit N`): an integer from 1 to `max`, or undefined when not given. @throws UsageError */
export function countOption(raw: string | boolean | undefined, option: string, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (typeof raw !== 'string' || !/^[0-9]+$/.test(raw) || value < 1 || value > max)
    throw new UsageError(`--${option} must be an integer from 1 to ${max}; got "${String(raw)}"`);
  return value;
}
