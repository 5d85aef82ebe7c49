/**
 * `npm run bench [-- --smoke | --large] [--out FILE]`: ratios of interleaved runs (absolute times drift on a shared
 * machine), on the synthesized bundles and through `npm start`; `npm run bench:doc` puts its results in the docs.
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { writeInventory } from '../cli/inventory/batch-writer';
import { ENV } from '../functions/config';
import { createDynamoClient } from '../functions/store/dynamo-client';
import { type DeployedBundle, type DeployedBundles, synthesizeDeployedBundles } from '../infra/synthesized-assets';
import { configureFunctionEnvironment } from '../local/environment';
import { LOCAL_TABLE_NAMES, useLocalCredentials } from '../service/local-dynamodb';
import { type LocalApiProcess, startLocalApiProcess } from '../test/helpers/api-process';
import { measureColdStarts, measureFunctionMemory } from './functions';
import { closeHttp } from './http';
import { benchInventory, COLD_PATH_INVENTORY } from './inventory';
import { measureLists } from './list';
import {
  BATCH_SCENARIOS,
  BATCH_SIZE,
  localDynamo,
  measureScenarios,
  PATCH_SCENARIOS,
  scenarioContext,
  stockOf,
} from './patch';
import { measureReads } from './read-units';
import { type BenchResults, renderReport } from './report';
import { progress, round } from './stats';

interface Profile {
  coldRuns: number;
  patchIterations: number;
  patchWarmup: number;
  /** Rounds of the batch scenarios (each sends 100 PATCHes), after their warm-up rounds. */
  batchIterations: number;
  batchWarmup: number;
  /** List sizes, and the rounds at each. */
  lists: readonly (readonly [number, number])[];
  /** Entries per writer in the read-units measurement, and per table in the import-rate one. */
  readUnitsEntries: number;
}

const FULL: Profile = {
  coldRuns: 15,
  patchIterations: 600,
  patchWarmup: 40,
  batchIterations: 100,
  batchWarmup: 5,
  lists: [
    [1_000, 15],
    [10_000, 9],
    [100_000, 5],
  ],
  readUnitsEntries: 20_000,
};

const PROFILES: Record<'full' | 'large' | 'smoke', Profile> = {
  full: FULL,
  large: { ...FULL, lists: [...FULL.lists, [1_000_000, 2]] },
  // Every scenario, path and size, in few rounds: a check that the bench runs, not figures.
  smoke: {
    coldRuns: 1,
    patchIterations: 5,
    patchWarmup: 1,
    batchIterations: 1,
    batchWarmup: 0,
    lists: [
      [20, 1],
      [60, 1],
      [150, 1],
    ],
    readUnitsEntries: 100,
  },
};

const { values: args } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    large: { type: 'boolean', default: false },
    out: { type: 'string', default: join(import.meta.dirname, 'results.json') },
  },
});
const profileName = args.smoke ? 'smoke' : args.large ? 'large' : 'full';
const profile = PROFILES[profileName];

/** The environment each function runs with in a probe process: npm start's tables, and npm start for the self-check. */
function functionEnvironment(api: LocalApiProcess): Record<string, string> {
  const env: Record<string, string> = { [ENV.selfCheckBaseUrl]: api.baseUrl, POWERTOOLS_LOG_LEVEL: 'SILENT' };
  configureFunctionEnvironment(api.dynamoEndpoint, LOCAL_TABLE_NAMES, env);
  return env;
}

/** Every phase, against the deployed `bundles` and `api`, reaching its DynamoDB Local with `client`. */
async function measureAll(
  api: LocalApiProcess,
  bundles: readonly DeployedBundle[],
  client: DynamoDBClient,
): Promise<Omit<BenchResults, 'meta'>> {
  const tables = LOCAL_TABLE_NAMES;
  // Unsigned entries: the list index holds the same entry either way (it projects quantity and status only), while
  // the naive Scan reads whole items, so they favour the baseline; what signing costs a list is in the read units.
  const seed = (from: number, to: number) =>
    writeInventory(benchInventory(from, to), { client, tableName: tables.inventory, concurrency: 4 }).then(() => {});
  const functionEnv = functionEnvironment(api);
  await seed(0, COLD_PATH_INVENTORY);
  progress(`cold path (init + first call): ${profile.coldRuns} fresh processes per function`);
  const coldStart = await measureColdStarts(bundles, {
    runs: profile.coldRuns,
    env: functionEnv,
    dynamoEndpoint: api.dynamoEndpoint,
    apiKey: api.apiKey,
  });
  const firstSize = profile.lists[0]?.[0] ?? 0;
  await seed(COLD_PATH_INVENTORY, firstSize);
  progress(`PATCH: ${profile.patchIterations} of each scenario, alternating`);
  const context = scenarioContext({
    baseUrl: api.baseUrl,
    apiKey: api.apiKey,
    petId: '1',
    quantity: await stockOf(api.baseUrl, api.apiKey, '1'),
    dynamo: localDynamo(client, tables.inventory, tables.idempotency ?? ''),
  });
  const patch = await measureScenarios(PATCH_SCENARIOS, context, profile.patchWarmup, profile.patchIterations);
  // Before the list sizes grow: the deploy self-check reads the whole list within its own time-out.
  progress('peak memory of every function but the list');
  const otherMemory = await measureFunctionMemory(bundles, functionEnv, api.apiKey);
  // The PATCHes changed pets 1..20: put them back, so the lists can be checked against the seeded entries.
  await seed(0, 20);
  progress(`read units of a whole list per writer, and import rows/s (${profile.readUnitsEntries} entries each)`);
  const reads = await measureReads(client, profile.readUnitsEntries);
  const listBundle = bundles.find((bundle) => bundle.handler === 'list-inventory');
  if (!listBundle) throw new Error('no list-inventory bundle');
  const listed = {
    baseUrl: api.baseUrl,
    apiKey: api.apiKey,
    bundle: listBundle.file,
    env: functionEnv,
    client,
    tableName: LOCAL_TABLE_NAMES.inventory,
  };
  const { list, largestListMemory } = await measureLists(listed, profile.lists, seed, firstSize);
  const memory = bundles.map((bundle) =>
    bundle.handler === 'list-inventory' ? largestListMemory : otherMemory.find((m) => m.function === bundle.handler),
  );
  // The batch against sequential PATCHes, on the first entries, after the lists needed them whole.
  await seed(0, BATCH_SIZE);
  const batch = await measureBatches(api);
  return { coldStart, patch, list, batch, memory: memory.filter((m) => m !== undefined), ...reads };
}

/** The batch against sequential PATCHes of the first {@link BATCH_SIZE} entries. */
async function measureBatches(api: LocalApiProcess) {
  const [petId = '', ...otherPets] = benchInventory(0, BATCH_SIZE).map((item) => item.petId);
  progress(`batch: ${profile.batchIterations} rounds of each scenario (${BATCH_SIZE} PATCHes a round), alternating`);
  const quantity = await stockOf(api.baseUrl, api.apiKey, petId);
  const context = scenarioContext({ baseUrl: api.baseUrl, apiKey: api.apiKey, petId, quantity, otherPets });
  return measureScenarios(BATCH_SCENARIOS, context, profile.batchWarmup, profile.batchIterations);
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  progress('starting npm start (in memory, no demo inventory, no throttling, no history poller)');
  useLocalCredentials();
  // Deployed, the history function runs on its own compute, off the request path; locally it would share the two
  // cores with DynamoDB Local and the gateway, recording every seeded entry while the API is measured.
  const starting = startLocalApiProcess({
    env: { PETSTORE_SEED: '0', PETSTORE_RATE_LIMIT: '0', PETSTORE_HISTORY: '0', POWERTOOLS_LOG_LEVEL: 'SILENT' },
    // Its ready line is read only once the synthesis below, which blocks this process, is done.
    readyTimeoutMs: 300_000,
  });
  let synthesized: DeployedBundles | undefined;
  let client: DynamoDBClient | undefined;
  try {
    // While npm start boots in its own process.
    progress('synthesizing the stack to get every function bundled as it deploys');
    synthesized = synthesizeDeployedBundles();
    // The pre-traffic hook runs only in a deployment (its first call is to CodeDeploy): no client waits on it.
    const bundles = synthesized.bundles.filter((bundle) => bundle.handler !== 'pre-traffic-hook');
    const api = await starting;
    client = createDynamoClient({ endpoint: api.dynamoEndpoint, requestTimeoutMs: 30_000 });
    // The list's handler and the naive one run in this process too; their logs would interleave with the tables.
    configureFunctionEnvironment(api.dynamoEndpoint, LOCAL_TABLE_NAMES);
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
    const figures = await measureAll(api, bundles, client);
    const argv = process.argv.slice(2);
    const results: BenchResults = {
      meta: {
        profile: profileName,
        command: ['npm run bench', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' '),
        node: process.version,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
        loadAverage: [round(loadAtStart, 2), round(loadavg()[0] ?? 0, 2)],
        date: new Date().toISOString(),
        seconds: round((Date.now() - startedAt) / 1000),
      },
      ...figures,
    };
    writeFileSync(args.out, `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`${renderReport(results)}\n\nWritten to ${args.out}\n`);
  } finally {
    closeHttp();
    client?.destroy();
    await (await starting.catch(() => undefined))?.stop();
    synthesized?.dispose();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
