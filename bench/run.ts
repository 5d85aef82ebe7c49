/**
 * `npm run bench [-- --smoke | --large] [--out FILE]`: the deployed bundles and `npm start` measured side by side,
 * as ratios of interleaved runs (absolute times drift on a shared machine); `npm run bench:doc` puts them in the docs.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { writeInventory } from '../cli/inventory/batch-writer';
import { ENV } from '../functions/config';
import { createDynamoClient } from '../functions/store/dynamo-client';
import { synthesizeDeployedBundles } from '../infra/synthesized-assets';
import { freePort, OPTIMIZING_COMPILER } from '../local/dynamodb-local';
import { configureFunctionEnvironment } from '../local/environment';
import { LOCAL_TABLE_NAMES, useLocalCredentials } from '../service/local-dynamodb';
import { measureColdStarts } from './cold-start';
import { measureFeed } from './feed';
import { closeHttp } from './http';
import { benchInventory, COLD_PATH_INVENTORY } from './inventory';
import { measureLists } from './list';
import { progress, round, type Section } from './measure';
import { BATCH_SIZE, measureBatch, measurePatch, type Store } from './patch';
import { measureReads } from './read-units';
import { type BenchResults, commandLine, renderReport } from './report';

/**
 * Fresh processes per function; PATCH and batch rounds `[warm-up, measured]` (a batch round sends 100 PATCHes); list
 * entries and the rounds at each; entries per writer of the read units (and imported); writes followed on the feed.
 */
const FULL = {
  coldRuns: 15,
  patch: [40, 600],
  batch: [5, 100],
  lists: { 1000: 15, 10000: 9, 100000: 5 } as Record<number, number>,
  readUnits: 20_000,
  feedWrites: 200,
};
const PROFILES = {
  full: FULL,
  large: { ...FULL, lists: { ...FULL.lists, 1000000: 2 } },
  // Every scenario, path and size in few rounds: a check that the bench runs, not figures.
  smoke: { coldRuns: 1, patch: [1, 5], batch: [0, 1], lists: { 20: 1, 60: 1, 150: 1 }, readUnits: 100, feedWrites: 3 },
};

const { values: args } = commandLine('usage: npm run bench [-- --smoke | --large] [--out FILE]', {
  options: {
    smoke: { type: 'boolean', default: false },
    large: { type: 'boolean', default: false },
    out: { type: 'string', default: join(import.meta.dirname, 'results.json') },
  },
});
const profileName = args.smoke ? 'smoke' : args.large ? 'large' : 'full';
const profile = PROFILES[profileName];
/**
 * The measured runs give DynamoDB Local the JVM's optimizing compiler, as a long-running store has: npm start's quick
 * compiler would slow the raw calls every ratio divides by. The smoke run keeps npm start's default.
 */
const javaOptions =
  profileName === 'smoke'
    ? {}
    : { JDK_JAVA_OPTIONS: [process.env.JDK_JAVA_OPTIONS, OPTIMIZING_COMPILER].filter(Boolean).join(' ') };
const listSizes = Object.entries(profile.lists).map(([entries, rounds]): [number, number] => [Number(entries), rounds]);

/** `npm start`'s script in a child process, in memory on free ports, resolved on its ready line and its key. */
async function startApi(env: Record<string, string>) {
  const [port, dynamoPort] = [await freePort(), await freePort()];
  const ports = { PETSTORE_IN_MEMORY: '1', PORT: String(port), DYNAMODB_PORT: String(dynamoPort) };
  const child = spawn(process.execPath, ['--import', 'tsx', join('local', 'start.ts')], {
    cwd: join(import.meta.dirname, '..'),
    env: { ...process.env, ...javaOptions, ...ports, PETSTORE_RATE_LIMIT: '0', POWERTOOLS_LOG_LEVEL: 'SILENT', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr])
    stream.on('data', (chunk: Buffer) => {
      output += chunk;
    });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGINT');
    return exited;
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ready = /API ready on (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(output)?.[1];
    const apiKey = /API key(?: \(new\))?: (psk_\S+)/.exec(output)?.[1];
    if (ready && apiKey) return { baseUrl: ready, apiKey, dynamoEndpoint: `http://127.0.0.1:${dynamoPort}`, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm start did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every section but the feed's on one `npm start` (no demo inventory, no history poller), against the bundles. */
async function measureAll(started: Awaited<ReturnType<typeof startApi>>): Promise<Record<string, Section>> {
  progress('synthesizing the stack to get every function bundled as it deploys');
  const synthesized = synthesizeDeployedBundles();
  const client = createDynamoClient({ endpoint: started.dynamoEndpoint, requestTimeoutMs: 30_000 });
  try {
    // The pre-traffic hook's first call is to CodeDeploy, the feed's publisher's to EventBridge and the webhook
    // sender's to SQS and Secrets Manager: no stand-in here, and no client waits on them.
    const unprobed = ['pre-traffic-hook', 'publish-changes', 'deliver-webhook'];
    const bundles = synthesized.bundles.filter((bundle) => !unprobed.includes(bundle.handler));
    const tables = { inventory: LOCAL_TABLE_NAMES.inventory, idempotency: LOCAL_TABLE_NAMES.idempotency ?? '' };
    const api: Store = { ...started, client, tables };
    // The list's handler, the naive one and the update handler run in this process too; the probes get `env`.
    configureFunctionEnvironment(started.dynamoEndpoint, LOCAL_TABLE_NAMES);
    const env: Record<string, string> = { [ENV.selfCheckBaseUrl]: api.baseUrl, POWERTOOLS_LOG_LEVEL: 'SILENT' };
    configureFunctionEnvironment(started.dynamoEndpoint, LOCAL_TABLE_NAMES, env);
    // Unsigned entries: the list index holds the same entry either way, while the naive Scan reads whole items.
    const seed = (from: number, to: number) =>
      writeInventory(benchInventory(from, to), { client, tableName: tables.inventory, concurrency: 4 }).then(() => {});
    await seed(0, COLD_PATH_INVENTORY);
    progress(`cold path (init + first call) and peak memory: ${profile.coldRuns} fresh processes per function`);
    const { coldStart, memory } = await measureColdStarts(bundles, { ...started, runs: profile.coldRuns, env });
    const firstSize = listSizes[0]?.[0] ?? 0;
    await seed(COLD_PATH_INVENTORY, firstSize);
    progress(`PATCH: ${profile.patch[1]} of each scenario, interleaved`);
    const patch = await measurePatch(api, '1', profile.patch);
    // The cold starts and the PATCHes changed the first pets: put them back, so the lists can be checked.
    await seed(0, COLD_PATH_INVENTORY);
    progress(`read units of a whole list per writer, and import rows/s (${profile.readUnits} entries each)`);
    const reads = await measureReads(client, profile.readUnits);
    const listed = { ...api, bundle: synthesized.bundle('list-inventory').file, env };
    const { section: list, largest } = await measureLists(listed, listSizes, seed, firstSize);
    // The batch on the first entries, after the lists needed them whole.
    await seed(0, BATCH_SIZE);
    progress(`batch: ${profile.batch[1]} rounds of each scenario (${BATCH_SIZE} PATCHes a round)`);
    const batch = await measureBatch(
      api,
      benchInventory(0, BATCH_SIZE).map((item) => item.petId),
      profile.batch,
    );
    return { 'cold-start': coldStart, patch, batch, list, memory: memory(largest), ...reads };
  } finally {
    closeHttp();
    client.destroy();
    synthesized.dispose();
  }
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  useLocalCredentials();
  progress('starting npm start (in memory, no demo inventory, no throttling, no history poller)');
  // Deployed, the history function runs off the request path; here it would share the cores with the measurements.
  const api = await startApi({ PETSTORE_SEED: '0', PETSTORE_HISTORY: '0' });
  const figures = await measureAll(api).finally(api.stop);
  progress(`the change feed: ${profile.feedWrites} writes through npm start with its history poller and a webhook`);
  const feed = await measureFeed(startApi, profile.feedWrites).finally(closeHttp);
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
    sections: { ...figures, feed },
  };
  writeFileSync(args.out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${renderReport(results)}\n\nWritten to ${args.out}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
