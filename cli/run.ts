import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import type { ApiGatewayClientFactory } from './authorizer-cache';
import { type CommandContext, writeLine } from './commands/context';
import { inventoryHistory } from './commands/history';
import { exportInventory, getInventoryEntry, importInventory } from './commands/inventory';
import { createKey, listKeys, revokeKey } from './commands/keys';
import { smoke } from './commands/smoke';
import { mapStack } from './commands/stack';
import { CliError, EXIT, firstLine, UsageError } from './errors';
import type { CliIo } from './io';
import { checkTargetOptions, resolveTarget, type StackOutputsReader, type Target } from './target';

interface CommandSpec {
  usage: string;
  summary: string;
  options: ParseArgsOptionsConfig;
  /** Names of the positional arguments after the command words. */
  positionals: readonly string[];
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
    usage: 'keys create --name NAME [--scope read|write]',
    summary:
      'issue an API key (write: every route, the default; read: GET only); prints the key alone on the last line',
    options: { name: { type: 'string' }, scope: { type: 'string' } },
    positionals: [],
    action: createKey,
  },
  'keys list': {
    usage: 'keys list [--format text|json]',
    summary: 'id, name, scope, created, revoked of every key (never the key)',
    options: { format: { type: 'string' } },
    positionals: [],
    action: listKeys,
  },
  'keys revoke': {
    usage: 'keys revoke ID',
    summary: "refuse a key from now on (with --stage, flushes the stage's authorizer cache)",
    options: {},
    positionals: ['ID'],
    action: revokeKey,
  },
  'inventory import': {
    usage: 'inventory import FILE [--format csv|json] [--dry-run] [--concurrency N] [--yes]',
    summary: 'validate every row, then write them all (re-runnable; production needs --yes)',
    options: {
      format: { type: 'string' },
      'dry-run': { type: 'boolean' },
      concurrency: { type: 'string' },
      yes: { type: 'boolean' },
    },
    positionals: ['FILE'],
    action: importInventory,
  },
  smoke: {
    usage: 'smoke --key KEY [--url URL] [--write]',
    summary: 'call a running API as a client does and check the answers (after a deploy)',
    options: { key: { type: 'string' }, url: { type: 'string' }, write: { type: 'boolean' } },
    positionals: [],
    action: smoke,
  },
  'inventory export': {
    usage: 'inventory export --key KEY [--url URL] [--format json|csv]',
    summary: 'every entry to stdout, ordered by petId (reads GET /inventory of the API)',
    options: { format: { type: 'string' }, key: { type: 'string' }, url: { type: 'string' } },
    positionals: [],
    action: exportInventory,
  },
  'inventory get': {
    usage: 'inventory get PETID --key KEY [--url URL]',
    summary: "one pet's entry as JSON (reads GET /inventory/{petId} of the API)",
    options: { key: { type: 'string' }, url: { type: 'string' } },
    positionals: ['PETID'],
    action: getInventoryEntry,
  },
  'inventory history': {
    usage: 'inventory history PETID [--since ISO] [--format table|json]',
    summary: "every recorded change of one pet's stock, oldest first",
    options: { since: { type: 'string' }, format: { type: 'string' } },
    positionals: ['PETID'],
    action: inventoryHistory,
  },
  'stack map': {
    usage: 'stack map MAPFILE LOGFILE',
    summary: "a logged stack with the bundle's positions mapped to the TypeScript (MAPFILE: the asset's index.js.map)",
    options: {},
    positionals: ['MAPFILE', 'LOGFILE'],
    action: mapStack,
  },
};

/** The help text of `npm run cli -- help`. */
export function usageText(): string {
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

/** Test seams: where stack outputs come from and the API Gateway client (there is no AWS in tests). */
export interface RunDependencies {
  readStackOutputs?: StackOutputsReader;
  createApiGateway?: ApiGatewayClientFactory;
}

/**
 * A negative integer (`-1`, a valid petId) is an argument, never an option: no option is a digit. parseArgs would read
 * `-1` as the short option `1`, so such arguments are shielded before it and restored after.
 */
const NEGATIVE_INTEGER = /^-[0-9]+$/;
const SHIELD = '\u0000negative:';

function shieldNegative(arg: string): string {
  return NEGATIVE_INTEGER.test(arg) ? `${SHIELD}${arg}` : arg;
}

function unshieldNegative(arg: string): string {
  return arg.startsWith(SHIELD) ? arg.slice(SHIELD.length) : arg;
}

/**
 * Runs one CLI invocation and returns its exit code: 0 done, 1 failed, 2 usage. Never throws: every error becomes
 * one line on stderr.
 */
export async function run(argv: readonly string[], io: CliIo, dependencies: RunDependencies = {}): Promise<number> {
  let target: Target | undefined;
  try {
    const allOptions: ParseArgsOptionsConfig = { ...GLOBAL_OPTIONS };
    for (const command of Object.values(COMMANDS)) Object.assign(allOptions, command.options);
    let parsed: ReturnType<typeof parseArgs<{ options: ParseArgsOptionsConfig; allowPositionals: true; strict: true }>>;
    try {
      parsed = parseArgs({ args: argv.map(shieldNegative), options: allOptions, allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError(firstLine((error as Error).message).replace(/\. To specify a positional.*$/, ''));
    }
    const positionals = parsed.positionals.map(unshieldNegative);
    const values = Object.fromEntries(
      Object.entries(parsed.values).map(([option, value]) => [
        option,
        typeof value === 'string' ? unshieldNegative(value) : value,
      ]),
    ) as typeof parsed.values;
    if (positionals[0] === 'help' || (positionals.length === 0 && values.help === true)) {
      io.stdout.write(usageText());
      return EXIT.ok;
    }
    if (positionals.length === 0) throw new UsageError('no command given');
    // Commands are one word (`smoke`) or two (`keys create`).
    const name = COMMANDS[positionals[0] as string] ? (positionals[0] as string) : positionals.slice(0, 2).join(' ');
    const command = COMMANDS[name];
    if (!command) {
      const group = positionals[0] as string;
      const subcommands = Object.keys(COMMANDS)
        .filter((known) => known.startsWith(`${group} `))
        .map((known) => known.slice(group.length + 1));
      if (subcommands.length === 0) throw new UsageError(`unknown command "${group}"`);
      throw new UsageError(
        positionals.length === 1
          ? `${group} needs a subcommand: ${subcommands.join(', ')}`
          : `unknown command "${name}"; ${group} has ${subcommands.join(', ')}`,
      );
    }
    if (values.help === true) {
      writeLine(io.stdout, `Usage: npm run cli -- ${command.usage} [--stage staging|production | --endpoint URL]`);
      writeLine(io.stdout, `  ${command.summary}`);
      return EXIT.ok;
    }
    const allowed = new Set([...Object.keys(GLOBAL_OPTIONS), ...Object.keys(command.options)]);
    const foreign = Object.keys(values).filter((option) => !allowed.has(option));
    if (foreign.length > 0) throw new UsageError(`${name} does not take --${foreign[0]}`);
    const args = positionals.slice(name.split(' ').length);
    if (args.length > command.positionals.length)
      throw new UsageError(
        `${name} takes ${describeArity(command.positionals)}; got extra "${args[command.positionals.length]}"`,
      );
    if (args.length < command.positionals.length)
      throw new UsageError(`${name} needs ${command.positionals.join(' ')} (usage: ${command.usage})`);

    const targetOptions = {
      ...(typeof values.stage === 'string' ? { stage: values.stage } : {}),
      ...(typeof values.endpoint === 'string' ? { endpoint: values.endpoint } : {}),
    };
    // Validate the target options before a command spends time on its input.
    checkTargetOptions(targetOptions);
    await command.action({
      io,
      options: values as CommandContext['options'],
      positionals: args,
      target: async () => {
        target ??= await resolveTarget(
          targetOptions,
          io.env,
          dependencies.readStackOutputs,
          dependencies.createApiGateway,
        );
        return target;
      },
    });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      writeLine(io.stderr, `error: ${error.message} (run "npm run cli -- help" for usage)`);
      return EXIT.usage;
    }
    const message = error instanceof CliError ? error.message : unexpected(error);
    writeLine(io.stderr, `error: ${firstLine(message)}`);
    return EXIT.failed;
  } finally {
    target?.close();
  }
}

function describeArity(names: readonly string[]): string {
  return names.length === 0 ? 'no arguments' : names.join(' ');
}

function unexpected(error: unknown): string {
  if (error instanceof Error) return `${error.name === 'Error' ? '' : `${error.name}: `}${error.message || 'failed'}`;
  return String(error);
}
