/**
 * `npx tsx bench/list-at-size.ts [--entries N] [--out FILE]`: the list through `npm start` at one large size, once,
 * as an operator would meet it (a manual run: it takes minutes; `npm run bench` covers the smaller sizes).
 *
 * 1. `npm start` in a child process, with its defaults for everything the functions read (page sizes, time-outs,
 *    attempts): in memory, no demo inventory, no throttling, no history poller (it would record every imported row
 *    on the same two cores while the list is measured).
 * 2. N entries (half with 19-digit ids) written to a CSV file and imported with the CLI (`npm run cli -- inventory
 *    import`), so each is stored as an import stores it (with its `lastChange`): the import's rows/s is reported.
 * 3. `GET /v1/inventory` without and with gzip: status, first and last byte, and the body checked whole against the
 *    entries in petId order.
 * 4. The naive baseline on the same table: one sequential Scan, unmarshal, stringify (bench/naive/handler.mjs).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { inventoryItemJson } from '../functions/inventory/json';
import { comparePetIds } from '../functions/inventory/repository';
import { apiGatewayProxyEvent, lambdaContext } from '../local/lambda/events';
import { LOCAL_TABLE_NAMES } from '../service/local-dynamodb';
import { startLocalApiProcess } from '../test/helpers/api-process';
import { NAIVE_HANDLER } from './cold-start';
import { benchInventory } from './inventory';
import { round } from './stats';

const { values: args } = parseArgs({
  options: {
    entries: { type: 'string', default: '300000' },
    out: { type: 'string' },
  },
});
const ENTRIES = Number(args.entries);
function progress(line: string): void {
  process.stderr.write(`[list-at-size] ${line}\n`);
}

interface Timed {
  status: number;
  firstByteMs: number;
  lastByteMs: number;
  bytes: number;
  exact: boolean;
}

/** One GET over a fresh connection, timed to its first and last body byte as sent (gzip not decoded until the end). */
function timedList(url: string, headers: Record<string, string>, expected: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      let firstByteMs = 0;
      res.on('data', (chunk: Buffer) => {
        if (parts.length === 0) firstByteMs = performance.now() - started;
        parts.push(chunk);
      });
      res.on('end', () => {
        const lastByteMs = performance.now() - started;
        const raw = Buffer.concat(parts);
        const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          firstByteMs: round(firstByteMs),
          lastByteMs: round(lastByteMs),
          bytes: raw.length,
          exact: text === expected,
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const items = benchInventory(0, ENTRIES);
  const expected = `[${[...items]
    .sort((a, b) => comparePetIds(a.petId, b.petId))
    .map(inventoryItemJson)
    .join(',')}]`;
  const dir = mkdtempSync(join(tmpdir(), 'list-at-size-'));
  const file = join(dir, 'stock.csv');
  writeFileSync(
    file,
    `petId,quantity,status\n${items.map((i) => `${i.petId},${i.quantity},${i.status}`).join('\n')}\n`,
  );

  progress('starting npm start (defaults; in memory, no demo inventory, no throttling, no history poller)');
  const api = await startLocalApiProcess({
    env: { PETSTORE_SEED: '0', PETSTORE_RATE_LIMIT: '0', PETSTORE_HISTORY: '0', POWERTOOLS_LOG_LEVEL: 'SILENT' },
  });
  try {
    progress(`importing ${ENTRIES} entries with the CLI`);
    const importStarted = performance.now();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'cli/main.ts', 'inventory', 'import', file],
      {
        cwd: join(import.meta.dirname, '..'),
        env: { ...process.env, DYNAMODB_PORT: String(api.dynamoPort) },
        maxBuffer: 1 << 24,
      },
    );
    const importSeconds = (performance.now() - importStarted) / 1000;
    const cliRowsPerSecond = Number(/(\d+) rows\/s/.exec(stdout)?.[1] ?? Number.NaN);
    progress(stdout.trim());

    const headers = { Authorization: `Bearer ${api.apiKey}` };
    progress('GET /v1/inventory, identity (the first call: cold functions)');
    const cold = await timedList(`${api.baseUrl}/inventory`, { ...headers, 'Accept-Encoding': 'identity' }, expected);
    progress(JSON.stringify(cold));
    progress('GET /v1/inventory, identity');
    const identity = await timedList(
      `${api.baseUrl}/inventory`,
      { ...headers, 'Accept-Encoding': 'identity' },
      expected,
    );
    progress(JSON.stringify(identity));
    progress('GET /v1/inventory, gzip');
    const gzip = await timedList(`${api.baseUrl}/inventory`, { ...headers, 'Accept-Encoding': 'gzip' }, expected);
    progress(JSON.stringify(gzip));

    progress('naive: one sequential Scan, unmarshal, stringify of the same table');
    process.env.AWS_ENDPOINT_URL_DYNAMODB = api.dynamoEndpoint;
    process.env.INVENTORY_TABLE_NAME = LOCAL_TABLE_NAMES.inventory;
    process.env.AWS_REGION ??= 'us-east-1';
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const naive = (await import(NAIVE_HANDLER)) as {
      handler: (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>;
    };
    const naiveStarted = performance.now();
    const naiveResult = await naive.handler(
      apiGatewayProxyEvent({ requestContext: { requestId: 'naive' } }),
      lambdaContext({ requestId: 'naive', timeoutMs: 3_600_000 }),
    );
    const naiveMs = round(performance.now() - naiveStarted);
    if (naiveResult.statusCode !== 200) throw new Error(`naive answered ${naiveResult.statusCode}`);

    const results = {
      entries: ENTRIES,
      date: new Date().toISOString(),
      import: { seconds: round(importSeconds), cliRowsPerSecond },
      cold,
      identity,
      gzip,
      naiveMs,
      identityVsNaive: round(identity.lastByteMs / naiveMs, 3),
      gzipVsNaive: round(gzip.lastByteMs / naiveMs, 3),
    };
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    if (args.out) writeFileSync(args.out, `${JSON.stringify(results, null, 2)}\n`);
  } catch (error) {
    process.stderr.write(`npm start printed (last 4000 characters):\n${api.output().slice(-4000)}\n`);
    throw error;
  } finally {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
