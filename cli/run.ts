import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { API_KEY_SCOPES } from '../functions/api-keys/key';
import type { ApiGatewayClientFactory } from './authorizer-cache';
import { applyInventoryChanges } from './commands/apply-changes';
import { inventoryChanges } from './commands/changes';
import { type CommandContext, writeLine } from './commands/context';
import { inventoryHistory } from './commands/history';
import { exportInventory, getInventoryEntry, importInventory } from './commands/inventory';
import { createKey, listKeys, revokeKey } from './commands/keys';
import { smoke } from './commands/smoke';
import { mapStack } from './commands/stack';
import { CliError, EXIT, firstLine, UsageError } from './errors';
import type { CliIo } from './io';
import { checkTargetOptions, resolveTarget, type StackOutputsReader, type Target, type TargetOptions } from './target';

interface CommandSpec {
  /** The command words, then its arguments in capitals and its options: what `help` prints and what run parses. */
  usage: string;
  summary: string;
  action: (context: CommandContext) => Promise<void>;
}

const GLOBAL_OPTIONS: ParseArgsOptionsConfig = {
  stage: { type: 'string' },
  endpoint: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

/** Every command, by its words (`keys create`); test/infra/permissions.test.ts evaluates what each needs on a stage. */
export const COMMANDS: Record<string, CommandSpec> = {
  'keys create': {
    usage: `keys create --name NAME [--scope ${API_KEY_SCOPES.join('|')}]`,
    summary:
      'issue an API key (write: every route, the default; read: GET only); prints the key alone on the last line',
    action: createKey,
  },
  'keys list': {
    usage: 'keys list [--format text|json]',
    summary: 'id, name, scope, created, revoked of every key (never the key)',
    action: listKeys,
  },
  'keys revoke': {
    usage: 'keys revoke ID',
    summary: "refuse a key from now on (with --stage, flushes the stage's authorizer cache)",
    action: revokeKey,
  },
  'inventory import': {
    usage: 'inventory import FILE [--format csv|json] [--dry-run] [--concurrency N] [--yes]',
    summary: 'validate every row, then write them all (re-runnable; production needs --yes)',
    action: importInventory,
  },
  'inventory apply': {
    usage: 'inventory apply FILE [--dry-run]',
    summary:
      'validate every row of a change file (petId,adjustBy|quantity,reason,reference), then apply it in atomic batches of 100',
    action: applyInventoryChanges,
  },
  smoke: {
    usage: 'smoke --key KEY [--url URL]',
    summary: 'call a running API as a client does and check the answers (after a deploy)',
    action: smoke,
  },
  'inventory export': {
    usage: 'inventory export --key KEY [--url URL] [--format json|csv]',
    summary: 'every entry to stdout, ordered by petId (reads GET /inventory of the API)',
    action: exportInventory,
  },
  'inventory get': {
    usage: 'inventory get PETID --key KEY [--url URL]',
    summary: "one pet's entry as JSON (reads GET /inventory/{petId} of the API)",
    action: getInventoryEntry,
  },
  'inventory history': {
    usage: 'inventory history PETID [--since ISO] [--format table|json]',
    summary: "every recorded change of one pet's stock, oldest first",
    action: inventoryHistory,
  },
  'inventory changes': {
    usage: 'inventory changes --key KEY [--url URL] [--cursor C] [--limit N] [--follow] [--format text|json]',
    summary:
      'every stock change from cursor C (else the oldest kept), one a line; --follow: then each as it is made, until Ctrl-C',
    action: inventoryChanges,
  },
  'stack map': {
    usage: 'stack map MAPFILE LOGFILE',
    summary: "a logged stack with the bundle's positions mapped to the TypeScript (MAPFILE: the asset's index.js.map)",
    action: mapStack,
  },
};

/** The help text of `npm run cli -- help`. */
function usageText(): string {
  const width = Math.max(...Object.values(COMMANDS).map((command) => command.usage.length));
  return [
    'Usage: npm run cli -- <command> [options]',
    '',
    'Commands:',
    ...Object.values(COMMANDS).map((command) => `  ${command.usage.padEnd(width)}  ${command.summary}`),
    '',
    'Where it acts (every command):',
    '  (default)                   the DynamoDB Local of `npm start`: http://127.0.0.1:$DYNAMODB_PORT (8000)',
    '  --endpoint URL              another DynamoDB endpoint (tables: INVENTORY_TABLE_NAME, API_KEYS_TABLE_NAME,',
    '                              INVENTORY_HISTORY_TABLE_NAME)',
    '  --stage staging|production  the deployed stack, with your AWS credentials and region',
    '',
    'Exit codes: 0 done, 1 failed, 2 usage. See docs/cli.md.',
    '',
  ].join('\n');
}

/** Test seams: there is no AWS in tests. */
export interface RunDependencies {
  readStackOutputs?: StackOutputsReader;
  createApiGateway?: ApiGatewayClientFactory;
}

/** The options a usage names: `--name NAME` and `--format a|b` take a value, `--dry-run` does not. */
function optionsOf(usage: string): ParseArgsOptionsConfig {
  const named = usage.matchAll(/--([a-z-]+)( [A-Za-z|]+)?/g);
  return Object.fromEntries([...named].map(([, name, value]) => [name, { type: value ? 'string' : 'boolean' }]));
}

/** The values of each option whose usage lists them (`--format text|json`); the command picks the default. */
function choicesOf(usage: string) {
  const listed = usage.matchAll(/--([a-z-]+) ([a-z]+(?:\|[a-z]+)+)/g);
  return [...listed].map(([, name = '', list = '']) => [name, list.split('|')] as const);
}

/** The arguments a usage names after its command words: `PETID` of `inventory get PETID --key KEY`. */
function positionalsOf(name: string, usage: string): string[] {
  const words = usage.split(' ').slice(name.split(' ').length);
  const end = words.findIndex((word) => !/^[A-Z]+$/.test(word));
  return end === -1 ? words : words.slice(0, end);
}

/** A negative integer (`-1`, a valid petId) is an argument: shielded from parseArgs, which would read option `1`. */
const NEGATIVE_INTEGER = /^-[0-9]+$/;
const SHIELD = '\u0000negative:';

function unshield<T>(value: T): T {
  return typeof value === 'string' && value.startsWith(SHIELD) ? (value.slice(SHIELD.length) as T) : value;
}

/** The words and options of a command line, every option any command takes allowed. @throws UsageError */
function parseCommandLine(argv: readonly string[]) {
  const options = Object.assign({ ...GLOBAL_OPTIONS }, ...Object.values(COMMANDS).map((c) => optionsOf(c.usage)));
  const args = argv.map((arg) => (NEGATIVE_INTEGER.test(arg) ? `${SHIELD}${arg}` : arg));
  try {
    const parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
    const values = Object.entries(parsed.values).map(([option, value]) => [option, unshield(value)]);
    return { words: parsed.positionals.map(unshield), values: Object.fromEntries(values) as CommandContext['options'] };
  } catch (error) {
    throw new UsageError(firstLine((error as Error).message).replace(/\. To specify a positional.*$/, ''));
  }
}

/** The command the first one or two words name (`smoke`, `keys create`). @throws UsageError */
function findCommand(words: readonly string[]): string {
  const [group = '', second] = words;
  const name = Object.hasOwn(COMMANDS, group) ? group : `${group} ${second}`;
  if (Object.hasOwn(COMMANDS, name)) return name;
  const subcommands = Object.keys(COMMANDS)
    .filter((known) => known.startsWith(`${group} `))
    .map((known) => known.slice(group.length + 1));
  if (subcommands.length === 0) throw new UsageError(`unknown command "${group}"`);
  if (second === undefined) throw new UsageError(`${group} needs a subcommand: ${subcommands.join(', ')}`);
  throw new UsageError(`unknown command "${name}"; ${group} has ${subcommands.join(', ')}`);
}

/** The command's own arguments, after checking its options and their number. @throws UsageError */
function commandArguments(name: string, words: readonly string[], values: CommandContext['options']): string[] {
  const { usage } = COMMANDS[name] as CommandSpec;
  const allowed = { ...GLOBAL_OPTIONS, ...optionsOf(usage) };
  const foreign = Object.keys(values).find((option) => !Object.hasOwn(allowed, option));
  if (foreign !== undefined) throw new UsageError(`${name} does not take --${foreign}`);
  for (const [option, choices] of choicesOf(usage)) {
    const value = values[option];
    if (value !== undefined && !choices.includes(value as string))
      throw new UsageError(`--${option} must be one of ${choices.join(', ')}; got "${String(value)}"`);
  }
  const wanted = positionalsOf(name, usage);
  const args = words.slice(name.split(' ').length);
  if (args.length > wanted.length)
    throw new UsageError(`${name} takes ${wanted.join(' ') || 'no arguments'}; got extra "${args[wanted.length]}"`);
  if (args.length < wanted.length) throw new UsageError(`${name} needs ${wanted.join(' ')} (usage: ${usage})`);
  return args;
}

/** Runs one CLI invocation and returns its exit code (0 done, 1 failed, 2 usage); every error is one stderr line. */
export async function run(argv: readonly string[], io: CliIo, dependencies: RunDependencies = {}): Promise<number> {
  let target: Target | undefined;
  try {
    const { words, values } = parseCommandLine(argv);
    if (words[0] === 'help' || (words.length === 0 && values.help === true)) {
      io.stdout.write(usageText());
      return EXIT.ok;
    }
    if (words.length === 0) throw new UsageError('no command given');
    const name = findCommand(words);
    const command = COMMANDS[name] as CommandSpec;
    if (values.help === true) {
      writeLine(io.stdout, `Usage: npm run cli -- ${command.usage} [--stage staging|production | --endpoint URL]`);
      writeLine(io.stdout, `  ${command.summary}`);
      return EXIT.ok;
    }
    const positionals = commandArguments(name, words, values);
    const targetOptions = { stage: values.stage, endpoint: values.endpoint } as TargetOptions;
    // Validate the target options before a command spends time on its input.
    checkTargetOptions(targetOptions);
    const { readStackOutputs, createApiGateway } = dependencies;
    await command.action({
      io,
      options: values,
      positionals,
      target: async () => (target ??= await resolveTarget(targetOptions, io.env, readStackOutputs, createApiGateway)),
    });
    return EXIT.ok;
  } catch (error) {
    return reportError(io, error);
  } finally {
    target?.close();
  }
}

function reportError(io: CliIo, error: unknown): number {
  if (error instanceof UsageError) {
    writeLine(io.stderr, `error: ${error.message} (run "npm run cli -- help" for usage)`);
    return EXIT.usage;
  }
  const message = error instanceof CliError ? error.message : unexpected(error);
  writeLine(io.stderr, `error: ${firstLine(message)}`);
  return EXIT.failed;
}

function unexpected(error: unknown): string {
  if (error instanceof Error) return `${error.name === 'Error' ? '' : `${error.name}: `}${error.message || 'failed'}`;
  return String(error);
}
