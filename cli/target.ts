import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DescribeTableCommand, type DynamoDBClient, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { ENV, numberEnv, PORT_NUMBER } from '../functions/config';
import { createDynamoClient } from '../functions/store/dynamo-client';
import { isStorageUnavailable, NETWORK_CODES } from '../functions/store/storage-errors';
import {
  LOCAL_DYNAMODB_PORT,
  LOCAL_TABLE_NAMES,
  type TableNames,
  useLocalCredentials,
} from '../service/local-dynamodb';
import { STACK_OUTPUTS, STAGES, type StageName as Stage, stackName } from '../service/names';
import { type ApiGatewayClientFactory, createApiGatewayClient, flushAuthorizerCache } from './authorizer-cache';
import { CliError, UsageError } from './errors';

/** Where a command acts: a DynamoDB endpoint and the service's table names (inventory, API keys, history). */
export interface Target {
  client: DynamoDBClient;
  tables: TableNames;
  /** For messages: "local DynamoDB at http://127.0.0.1:8000", "stage staging (stack …, eu-west-1)". */
  description: string;
  /** These four come from a deployed stack's outputs. */
  stage?: Stage;
  apiUrl?: string;
  authorizerCacheTtlSeconds?: number;
  flushAuthorizerCache?: () => Promise<void>;
  close(): void;
}

export interface TargetOptions {
  stage?: string;
  endpoint?: string;
}

/** Target options that {@link checkTargetOptions} passed: a known stage, or an endpoint, or neither. */
export type CheckedTargetOptions = { stage: Stage; endpoint?: undefined } | { stage?: undefined; endpoint?: string };

/** The stack outputs the CLI reads (all but the custom domain and the event bus, which no command uses). */
const { customDomainTarget: _, changeEventBus: __, ...READ_OUTPUTS } = STACK_OUTPUTS;

/** Reads a stack's outputs; injected in tests (there is no AWS here). */
export type StackOutputsReader = (stack: string) => Promise<{ region: string; outputs: Record<string, string> }>;

/** Where a command acts (docs/cli.md, "Where it acts"). */
export async function resolveTarget(
  options: CheckedTargetOptions,
  env: Record<string, string | undefined>,
  readStackOutputs: StackOutputsReader = describeStackOutputs,
  createApiGateway: ApiGatewayClientFactory = createApiGatewayClient,
): Promise<Target> {
  if (options.stage !== undefined) return resolveStage(options.stage, env, readStackOutputs, createApiGateway);
  return resolveLocal(options.endpoint, env);
}

/** @throws UsageError for contradictory or unknown target options. */
export function checkTargetOptions(options: TargetOptions): asserts options is CheckedTargetOptions {
  if (options.stage !== undefined && options.endpoint !== undefined)
    throw new UsageError('--stage and --endpoint cannot be used together');
  if (options.stage !== undefined && !(STAGES as readonly string[]).includes(options.stage))
    throw new UsageError(`--stage must be one of ${STAGES.join(', ')}; got "${options.stage}"`);
}

function resolveLocal(endpointOption: string | undefined, env: Record<string, string | undefined>): Target {
  const endpoint = endpointOption ?? `http://127.0.0.1:${localPort(env)}`;
  const protocol = URL.parse(endpoint)?.protocol;
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new UsageError(`--endpoint must be an http or https URL such as http://127.0.0.1:8000; got "${endpoint}"`);
  const credentialsEnv: NodeJS.ProcessEnv = {
    AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: env.AWS_ACCESS_KEY_ID ? env.AWS_SECRET_ACCESS_KEY : undefined,
    AWS_REGION: env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined,
  };
  useLocalCredentials(credentialsEnv);
  const client = createDynamoClient({
    endpoint,
    region: credentialsEnv.AWS_REGION as string,
    credentials: {
      accessKeyId: credentialsEnv.AWS_ACCESS_KEY_ID as string,
      secretAccessKey: credentialsEnv.AWS_SECRET_ACCESS_KEY as string,
    },
    connectionTimeoutMs: 2000,
    requestTimeoutMs: 10_000,
  });
  const tables = {
    inventory: env[ENV.inventoryTable] || LOCAL_TABLE_NAMES.inventory,
    apiKeys: env[ENV.apiKeysTable] || LOCAL_TABLE_NAMES.apiKeys,
    history: env[ENV.historyTable] || LOCAL_TABLE_NAMES.history,
  };
  return {
    client,
    tables,
    description: `${endpointOption === undefined ? 'local DynamoDB' : 'DynamoDB'} at ${endpoint}`,
    close: () => client.destroy(),
  };
}

function localPort(env: Record<string, string | undefined>): number {
  try {
    return numberEnv(LOCAL_DYNAMODB_PORT.variable, LOCAL_DYNAMODB_PORT.fallback, PORT_NUMBER, env);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function resolveStage(
  stage: Stage,
  env: Record<string, string | undefined>,
  readStackOutputs: StackOutputsReader,
  createApiGateway: ApiGatewayClientFactory,
): Promise<Target> {
  // The SDK would silently send a deployed stage's writes to this endpoint instead.
  for (const name of ['AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL']) {
    if (env[name]) throw new CliError(`${name} is set (${env[name]}); unset it to act on the deployed ${stage} stage`);
  }
  const stack = stackName(stage);
  const { region, outputs } = await readStackOutputs(stack);
  const missing = Object.values(READ_OUTPUTS).filter((name) => !outputs[name]);
  if (missing.length > 0)
    throw new CliError(
      `Stack ${stack} in ${region} has no output ${missing.join(', ')}: redeploy it with this version`,
    );
  const output = (key: keyof typeof READ_OUTPUTS) => outputs[READ_OUTPUTS[key]] as string;
  const api = { region, restApiId: output('restApiId'), stageName: output('apiStageName') };
  let client: DynamoDBClient | undefined;
  return {
    // Made on first use: `smoke`, `inventory export` and `inventory get` read only the stage's ApiUrl.
    get client() {
      // `adaptive` slows the calls that follow a throttled one: an import paces itself to the table.
      client ??= createDynamoClient({
        region,
        retryMode: 'adaptive',
        connectionTimeoutMs: 2000,
        requestTimeoutMs: 10_000,
      });
      return client;
    },
    tables: { inventory: output('inventoryTable'), apiKeys: output('apiKeysTable'), history: output('historyTable') },
    description: `stage ${stage} (stack ${stack}, ${region})`,
    stage,
    apiUrl: output('apiUrl'),
    authorizerCacheTtlSeconds: Number(output('authorizerCacheTtlSeconds')),
    flushAuthorizerCache: () => flushAuthorizerCache(api, createApiGateway),
    close: () => client?.destroy(),
  };
}

/** Reads a stack's outputs with CloudFormation DescribeStacks, turning each way it can fail into one line. */
export async function describeStackOutputs(
  stack: string,
): Promise<{ region: string; outputs: Record<string, string> }> {
  const cloudFormation = new CloudFormationClient({});
  try {
    const region = await cloudFormation.config.region().catch(() => {
      throw new CliError('No AWS region configured: set AWS_REGION (or a profile with a region) to use --stage');
    });
    const result = await cloudFormation.send(new DescribeStacksCommand({ StackName: stack })).catch((error) => {
      throw stackError(error, stack, region);
    });
    const outputs = (result.Stacks?.[0]?.Outputs ?? []).map((output) => [output.OutputKey, output.OutputValue]);
    return { region, outputs: Object.fromEntries(outputs) };
  } finally {
    cloudFormation.destroy();
  }
}

function stackError(error: unknown, stack: string, region: string): CliError {
  const name = (error as Error)?.name ?? '';
  const message = (error as Error)?.message ?? String(error);
  if (name === 'CredentialsProviderError' || /could not load credentials/i.test(message))
    return new CliError(
      'No AWS credentials found: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY to use --stage',
      { cause: error },
    );
  const code = unreachableCode(error);
  if (code !== undefined)
    return new CliError(
      `Cannot reach CloudFormation in ${region} (${code}) to read stack ${stack}: check the network and AWS_REGION`,
      { cause: error },
    );
  if (/does not exist/i.test(message))
    return new CliError(`Stack ${stack} does not exist in ${region}: deploy it first, or check AWS_REGION`, {
      cause: error,
    });
  return new CliError(`Could not read stack ${stack} in ${region}: ${message.split('\n')[0]}`, { cause: error });
}

/**
 * Runs `action` on a table once DescribeTable found it: a wrong endpoint, stage or table name is one clear line before
 * a command starts, not an SDK error halfway. A failure is one {@link storageError} line.
 */
export async function onTable<T>(target: Target, tableName: string, action: () => Promise<T>): Promise<T> {
  try {
    await target.client.send(new DescribeTableCommand({ TableName: tableName }));
    return await action();
  } catch (error) {
    throw storageError(error, target, tableName);
  }
}

/** Turns a DynamoDB error into the one line an operator needs. */
export function storageError(error: unknown, target: Target, tableName: string): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof ResourceNotFoundException) {
    const hint = target.stage
      ? 'the stack outputs name a table that is gone'
      : 'run `npm start` once to create it, or set INVENTORY_TABLE_NAME / API_KEYS_TABLE_NAME / INVENTORY_HISTORY_TABLE_NAME';
    return new CliError(`Table ${tableName} does not exist in ${target.description}: ${hint}`, { cause: error });
  }
  const message = (error as Error)?.message || (error as Error)?.name || String(error);
  const code = networkErrorCode(error);
  if (isStorageUnavailable(error) || (code !== undefined && NETWORK_CODES.has(code))) {
    const hint = target.stage ? '' : ': is `npm start` running? (or pass --endpoint / set DYNAMODB_PORT)';
    // A network error's code (ECONNREFUSED) says more than the SDK's wrapper message around it.
    const reason = code ?? message.split('\n')[0];
    return new CliError(`Cannot reach ${target.description} (${reason})${hint}`, { cause: error });
  }
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  // The SDK names an answer without a DynamoDB error in it "UnknownError": something other than DynamoDB answered.
  if (status !== undefined && (error as Error)?.message === 'UnknownError')
    return new CliError(
      `${target.description} answered HTTP ${status} without a DynamoDB error: is it a DynamoDB endpoint?`,
      { cause: error },
    );
  return new CliError(`${target.description}, table ${tableName}: ${message.split('\n')[0]}`, { cause: error });
}

/** Node's code of a network error, from the error's cause chain (AggregateErrors included) or the SDK's message. */
function networkErrorCode(error: unknown): string | undefined {
  const chain: unknown[] = [error];
  for (let i = 0; i < chain.length && i < 20; i++) {
    const next = chain[i];
    if (typeof next !== 'object' || next === null || chain.indexOf(next) < i) continue;
    const { code, cause, errors } = next as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
    chain.push(cause, ...(Array.isArray(errors) ? errors : []));
  }
  return new RegExp(`\\b(${[...NETWORK_CODES].join('|')})\\b`).exec(String((error as Error)?.message))?.[1];
}

/** The network code of an error that means the host could not be reached at all (ECONNREFUSED, ...); else undefined. */
export function unreachableCode(error: unknown): string | undefined {
  const code = networkErrorCode(error);
  return code !== undefined && NETWORK_CODES.has(code) ? code : undefined;
}
