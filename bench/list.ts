import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { inventoryItemJson } from '../functions/inventory/json';
import { InventoryTable } from '../functions/store/inventory-table';
import { LIST_INVENTORY_MEMORY_MB } from '../infra/constructs/inventory-function';
import { apiGatewayProxyEvent, lambdaContext } from '../local/lambda/events';
import { installLambdaStreamingRuntime, invokeStreamingHandler } from '../local/lambda/streaming';
import { comparePetIds } from '../test/fixtures/builders';
import { type MemoryFigure, NAIVE_HANDLER, probeMemory } from './functions';
import { closeHttp, httpCall } from './http';
import { benchInventory } from './inventory';
import { alternate, columnsTable, median, progress, ratio, round, type Target, target } from './stats';

type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** API Gateway streams the first 10 MB of a response unthrottled, then 2 MB/s: the largest list's gzip target. */
const UNTHROTTLED_STREAM_BYTES = 10_000_000;

/** The old-space cap of the list's second memory probe (its heap peak at 1,000,000 entries is well below it). */
const LIST_HEAP_CAP_MB = 128;

/** GET /inventory at one size: medians of the handler and the naive path in-process, and through `npm start`. */
export interface ListFigure {
  entries: number;
  rounds: number;
  /** The streaming handler in-process: to its prelude (first byte) and to its last byte. */
  handlerTtfbMsMedian: number;
  handlerMsMedian: number;
  naiveMsMedian: number;
  /**
   * The list's reads alone (the handler's InventoryTable, its ordered Query of the list index), nothing serialized:
   * what the petId order costs before the handler writes a byte, the list's floor against the naive unsorted Scan.
   */
  queryMsMedian: number;
  /** Through npm start over HTTP, without and with gzip: first body byte and last byte. */
  gatewayTtfbMsMedian: number;
  gatewayMsMedian: number;
  gatewayGzipTtfbMsMedian: number;
  gatewayGzipMsMedian: number;
  identityBytes: number;
  gzipBytes: number;
  naiveBodyBytes: number;
  /** Both gateway answers were exactly the expected body: every entry, every digit, in petId order. */
  exact: boolean;
  handlerPeakRssMb: number;
  /** With V8's old space capped: what the list needs, rather than the garbage V8 lets grow before collecting it. */
  handlerPeakRssCappedMb: number;
  naivePeakRssMb: number;
}

/** What the list is measured on: `npm start`, the list's deployed bundle, the functions' environment, its table. */
interface ListBench {
  baseUrl: string;
  apiKey: string;
  bundle: string;
  env: Record<string, string>;
  client: DynamoDBClient;
  tableName: string;
}

/** The bench and, in-process, the list handler and the naive one. */
type ListOptions = ListBench & { handler: unknown; naive: ApiHandler };

/**
 * The list at each `[entries, rounds]` of `sizes`, `seed` writing entries from+1..to as the size grows beyond
 * `seeded`; with the memory figure of the largest.
 */
export async function measureLists(
  bench: ListBench,
  sizes: readonly (readonly [number, number])[],
  seed: (from: number, to: number) => Promise<void>,
  seeded: number,
) {
  installLambdaStreamingRuntime();
  const options: ListOptions = {
    ...bench,
    handler: (await import('../functions/handlers/list-inventory')).handler,
    naive: (await import(NAIVE_HANDLER)).handler,
  };
  const list: ListFigure[] = [];
  let largest: MemoryFigure | undefined;
  for (const [entries, rounds] of sizes) {
    if (entries > seeded) {
      progress(`seeding up to ${entries} entries`);
      await seed(seeded, entries);
      seeded = entries;
      // Seeding takes longer than the gateway's keep-alive timeout: start the next phase on fresh connections.
      closeHttp();
    }
    progress(`GET /inventory at ${entries} entries`);
    const [figure, memory] = await measureList(options, entries, rounds);
    list.push(figure);
    largest = memory;
  }
  if (!largest) throw new Error('the profile lists no size');
  return { list, largestListMemory: largest };
}

/** The exact body GET /inventory must answer for entries 1..n: ordered by petId, every digit. */
function expectedListBody(entries: number): string {
  const items = benchInventory(0, entries).sort((a, b) => comparePetIds(a.petId, b.petId));
  return `[${items.map(inventoryItemJson).join(',')}]`;
}

/** `GET /inventory` at `entries`, five ways alternating, then each path's peak memory. */
async function measureList(options: ListOptions, entries: number, rounds: number): Promise<[ListFigure, MemoryFigure]> {
  const times = await listTimes(options, rounds, entries);
  if (!times.exact) throw new Error(`GET /inventory at ${entries} entries did not answer every entry exactly`);
  const events = [apiGatewayProxyEvent({ requestContext: { requestId: 'memory-probe' } })];
  const probe = { env: options.env, events, memoryMb: LIST_INVENTORY_MEMORY_MB };
  const memory = await probeMemory('list-inventory', `GET, ${entries} entries`, options.bundle, probe);
  // RSS that still grows with the store under the cap would be memory the list holds.
  const capped = { ...probe, heapLimitMb: LIST_HEAP_CAP_MB };
  const figure = {
    entries,
    ...times,
    handlerPeakRssMb: memory.maxRssMb,
    handlerPeakRssCappedMb: (await probeMemory('list-inventory', 'heap capped', options.bundle, capped)).maxRssMb,
    naivePeakRssMb: (await probeMemory('naive', `GET, ${entries} entries`, NAIVE_HANDLER, probe)).maxRssMb,
  };
  return [figure, memory];
}

type Coding = 'identity' | 'gzip';

async function listTimes(options: ListOptions, rounds: number, entries: number) {
  const expectedBody = expectedListBody(entries);
  const samples = new Map<string, number[]>();
  const push = (name: string, ms: number) => samples.set(name, [...(samples.get(name) ?? []), ms]);
  const bytes = { identity: 0, gzip: 0, naive: 0 };
  const exact: Partial<Record<Coding, boolean>> = {};
  let n = 0;
  const invocation = () => {
    const requestId = `bench-list-${n++}`;
    const context = lambdaContext({ requestId, timeoutMs: 600_000, memoryMb: LIST_INVENTORY_MEMORY_MB });
    return [apiGatewayProxyEvent({ requestContext: { requestId } }), context] as const;
  };
  const viaGateway = (coding: Coding) => async () => {
    const check = exact[coding] === undefined;
    const headers = { Authorization: `Bearer ${options.apiKey}`, 'Accept-Encoding': coding };
    const response = await httpCall(`${options.baseUrl}/inventory`, { headers, keepText: check });
    if (response.status !== 200) throw new Error(`GET /inventory (${coding}) answered ${response.status}`);
    if (check) exact[coding] = response.text === expectedBody;
    push(`${coding}Ttfb`, response.ttfbMs);
    push(coding, response.ttlbMs);
    bytes[coding] = response.bytes;
  };
  const inProcess = async () => {
    const started = performance.now();
    const { response, completion } = invokeStreamingHandler(options.handler, ...invocation());
    const { statusCode, body } = await response;
    push('handlerTtfb', performance.now() - started);
    for await (const _ of body);
    await completion;
    push('handler', performance.now() - started);
    if (statusCode !== 200) throw new Error(`list answered ${statusCode}`);
  };
  const naive = async () => {
    const started = performance.now();
    const result = await options.naive(...invocation());
    push('naive', performance.now() - started);
    if (result.statusCode !== 200) throw new Error(`naive list answered ${result.statusCode}`);
    bytes.naive = Buffer.byteLength(result.body);
  };
  // The handler's reads alone: every page of the list, nothing after them.
  const table = new InventoryTable({ client: options.client, tableName: options.tableName });
  const query = async () => {
    const started = performance.now();
    let read = 0;
    for await (const page of table.list()) read += page.length;
    push('query', performance.now() - started);
    if (read !== entries) throw new Error(`the list index gave ${read} entries of ${entries}`);
  };
  await alternate(rounds, [inProcess, naive, query, viaGateway('identity'), viaGateway('gzip')]);
  const at = (name: string) => round(median(samples.get(name) ?? []));
  return {
    rounds,
    handlerTtfbMsMedian: at('handlerTtfb'),
    handlerMsMedian: at('handler'),
    naiveMsMedian: at('naive'),
    queryMsMedian: at('query'),
    gatewayTtfbMsMedian: at('identityTtfb'),
    gatewayMsMedian: at('identity'),
    gatewayGzipTtfbMsMedian: at('gzipTtfb'),
    gatewayGzipMsMedian: at('gzip'),
    identityBytes: bytes.identity,
    gzipBytes: bytes.gzip,
    naiveBodyBytes: bytes.naive,
    exact: exact.identity === true && exact.gzip === true,
  };
}

const handlerVsNaive = (l: ListFigure) => ratio(l.handlerMsMedian, l.naiveMsMedian);
const kb = (bytes: number) => `${round(bytes / 1000)} KB`;

export function listTable(list: readonly ListFigure[]): string {
  return columnsTable(list, [
    ['entries', (l) => l.entries],
    ['handler first byte ms', (l) => l.handlerTtfbMsMedian],
    ['handler last byte ms', (l) => l.handlerMsMedian],
    ['naive ms', (l) => l.naiveMsMedian],
    ['handler/naive', (l) => `${handlerVsNaive(l)}x`],
    ['reads alone/naive', (l) => `${ratio(l.queryMsMedian, l.naiveMsMedian)}x`],
    ['npm start first/last byte ms', (l) => `${l.gatewayTtfbMsMedian} / ${l.gatewayMsMedian}`],
    ['npm start gzip first/last byte ms', (l) => `${l.gatewayGzipTtfbMsMedian} / ${l.gatewayGzipMsMedian}`],
    ['identity', (l) => kb(l.identityBytes)],
    ['gzip', (l) => kb(l.gzipBytes)],
    ['exact', (l) => (l.exact ? 'yes' : 'NO')],
    ['peak RSS handler', (l) => `${l.handlerPeakRssMb} MB`],
    [`peak RSS handler, heap capped at ${LIST_HEAP_CAP_MB} MB`, (l) => `${l.handlerPeakRssCappedMb} MB`],
    ['peak RSS naive', (l) => `${l.naivePeakRssMb} MB`],
  ]);
}

export function listTargets(list: readonly ListFigure[]): Target[] {
  const targets = list.map((l) =>
    target(`list at ${l.entries} entries: handler / naive (last byte)`, handlerVsNaive(l), 1.0),
  );
  for (const l of list.slice(1))
    targets.push(target(`list at ${l.entries} entries: npm start first byte (ms)`, l.gatewayTtfbMsMedian, 1000));
  const largest = list.at(-1);
  if (!largest) return targets;
  targets.push(
    target(`list at ${largest.entries}: gzip body (bytes)`, largest.gzipBytes, UNTHROTTLED_STREAM_BYTES),
    target(`list at ${largest.entries}: peak RSS (MB)`, largest.handlerPeakRssMb, LIST_INVENTORY_MEMORY_MB),
  );
  // Memory flat with size: with the heap capped, the largest list needs no more than 100,000 entries did (10% margin
  // for sampling); smaller lists end before the heap reaches its working size.
  const reference = list.find((l) => l.entries === 100_000);
  if (reference && reference !== largest)
    targets.push(
      target(
        `list peak RSS, heap capped at ${LIST_HEAP_CAP_MB} MB: ${largest.entries} / 100000 entries`,
        ratio(largest.handlerPeakRssCappedMb, reference.handlerPeakRssCappedMb),
        1.1,
      ),
    );
  return targets;
}
