/** `GET /inventory` at each size: the streaming handler and the naive one in-process, its reads alone, npm start. */
import { inventoryItemJson } from '../functions/inventory/json';
import { InventoryTable } from '../functions/store/inventory-table';
import { LIST_INVENTORY_MEMORY_MB } from '../infra/constructs/inventory-function';
import { apiGatewayProxyEvent, lambdaContext } from '../local/lambda/events';
import { installLambdaStreamingRuntime, invokeStreamingHandler } from '../local/lambda/streaming';
import { type Memory, NAIVE_HANDLER, probeMemory } from './cold-start';
import { closeHttp, send } from './http';
import { benchInventory } from './inventory';
import { interleaved, progress, quantile, ratio, round, type Section, type Target, target } from './measure';
import type { Store } from './patch';

/** API Gateway streams the first 10 MB of a response unthrottled, then 2 MB/s: the largest list's gzip target. */
const UNTHROTTLED_STREAM_BYTES = 10_000_000;
/** The old-space cap of the list's second memory probe: what the list needs, not the garbage V8 lets grow. */
const LIST_HEAP_CAP_MB = 128;

const NOTE =
  'Medians; handler and naive in-process, `npm start` over HTTP; "exact": both `npm start` answers equal the ' +
  'expected body byte for byte, every round.';
const COLUMNS = [
  ...['entries', 'handler first byte ms', 'handler last byte ms', 'naive ms', 'handler/naive', 'reads alone/naive'],
  ...['npm start first/last byte ms', 'npm start gzip first/last byte ms', 'identity', 'gzip', 'exact'],
  ...['peak RSS handler', `peak RSS handler, heap capped at ${LIST_HEAP_CAP_MB} MB`, 'peak RSS naive'],
];

type Handler = (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>;
type ListBench = Store & { handler: unknown; naive: Handler };

/** The five paths at one size, `rounds` interleaved: each path's median first byte and last byte, and body sizes. */
async function listTimes(bench: ListBench, entries: number, rounds: number) {
  const expected = `[${benchInventory(0, entries)
    .sort((a, b) => (BigInt(a.petId) < BigInt(b.petId) ? -1 : 1))
    .map(inventoryItemJson)
    .join(',')}]`;
  // The first body byte of each path, and npm start's last byte as received (before the bench decodes and checks it).
  const first: Record<string, number[]> = { handler: [], identity: [], gzip: [] };
  const last: Record<string, number[]> = { identity: [], gzip: [] };
  const bytes = { identity: 0, gzip: 0 };
  const context = () => lambdaContext({ timeoutMs: 600_000, memoryMb: LIST_INVENTORY_MEMORY_MB });
  const viaNpmStart = (coding: 'identity' | 'gzip') => async () => {
    const answer = await send(bench, 'GET', '/inventory', undefined, { 'Accept-Encoding': coding });
    if (answer.text !== expected) throw new Error(`GET /inventory (${coding}) at ${entries}: not the expected body`);
    first[coding]?.push(answer.ttfbMs);
    last[coding]?.push(answer.ttlbMs);
    bytes[coding] = answer.bytes;
  };
  const table = new InventoryTable({ client: bench.client, tableName: bench.tables.inventory });
  const tasks = {
    async handler() {
      const started = performance.now();
      const { response, completion } = invokeStreamingHandler(bench.handler, apiGatewayProxyEvent(), context());
      const { statusCode, body } = await response;
      first.handler?.push(performance.now() - started);
      for await (const _ of body);
      await completion;
      if (statusCode !== 200) throw new Error(`the list answered ${statusCode}`);
    },
    async naive() {
      const answer = await bench.naive(apiGatewayProxyEvent(), context());
      if (answer.statusCode !== 200) throw new Error(`the naive list answered ${answer.statusCode}`);
    },
    // The handler's reads alone (its ordered Query of the list index), nothing serialized: the list's floor.
    async query() {
      let read = 0;
      for await (const page of table.list()) read += page.length;
      if (read !== entries) throw new Error(`the list index gave ${read} entries of ${entries}`);
    },
    identity: viaNpmStart('identity'),
    gzip: viaNpmStart('gzip'),
  };
  const samples = await interleaved(tasks, rounds, { block: 1 });
  const median = (values: number[] = []) => round(quantile(values, 0.5));
  // A path's median first byte (in-process paths but the handler's: none) and last byte.
  const at = (path: string) => [median(first[path]), median(last[path] ?? samples[path])] as const;
  return {
    bytes,
    handler: at('handler'),
    naive: at('naive')[1],
    query: at('query')[1],
    npm: at('identity'),
    gzip: at('gzip'),
  };
}

/** The list at each `[entries, rounds]` of `sizes`, `seed(from, to)` adding entries as the size grows. */
export async function measureLists(
  api: Store & { bundle: string; env: Record<string, string> },
  sizes: readonly [number, number][],
  seed: (from: number, to: number) => Promise<void>,
  seeded: number,
): Promise<{ section: Section; largest: { scenario: string; memory: Memory } }> {
  installLambdaStreamingRuntime();
  const handler = (await import('../functions/handlers/list-inventory')).handler;
  const bench = { ...api, handler, naive: (await import(NAIVE_HANDLER)).handler as Handler };
  const rows: (string | number)[][] = [];
  const targets: Target[] = [];
  const capped: Record<number, Memory> = {};
  let memory: Memory | undefined;
  for (const [entries, rounds] of sizes) {
    if (entries > seeded) {
      progress(`seeding up to ${entries} entries`);
      await seed(seeded, entries);
      seeded = entries;
      closeHttp();
    }
    progress(`GET /inventory at ${entries} entries`);
    const { bytes, handler: h, naive, query, npm, gzip } = await listTimes(bench, entries, rounds);
    const probe = { env: api.env, events: [apiGatewayProxyEvent()], memoryMb: LIST_INVENTORY_MEMORY_MB };
    memory = await probeMemory(api.bundle, probe);
    capped[entries] = await probeMemory(api.bundle, { ...probe, heapLimitMb: LIST_HEAP_CAP_MB });
    const peaks = [memory, capped[entries], await probeMemory(NAIVE_HANDLER, probe)].map((m) => `${m?.maxRssMb} MB`);
    const handlerVsNaive = ratio(h[1], naive);
    const kb = (count: number) => `${round(count / 1000)} KB`;
    rows.push([
      ...[entries, h[0], h[1], naive, `${handlerVsNaive}x`, `${ratio(query, naive)}x`],
      ...[npm.join(' / '), gzip.join(' / '), kb(bytes.identity), kb(bytes.gzip), 'yes', ...peaks],
    ]);
    targets.push(target(`list at ${entries} entries: handler / naive (last byte)`, handlerVsNaive, 1));
    if (entries !== sizes[0]?.[0])
      targets.push(target(`list at ${entries} entries: npm start first byte (ms)`, npm[0], 1000));
    if (entries === sizes.at(-1)?.[0])
      targets.push(
        target(`list at ${entries}: gzip body (bytes)`, bytes.gzip, UNTHROTTLED_STREAM_BYTES),
        target(`list at ${entries}: peak RSS (MB)`, memory.maxRssMb, LIST_INVENTORY_MEMORY_MB),
      );
  }
  // Memory flat with size: with the heap capped, the largest list needs no more than 100,000 entries did (10% margin).
  const largest = sizes.at(-1)?.[0] ?? 0;
  if (largest > 100_000 && capped[100_000] && capped[largest]) {
    const name = `list peak RSS, heap capped at ${LIST_HEAP_CAP_MB} MB: ${largest} / 100000 entries`;
    targets.push(target(name, ratio(capped[largest].maxRssMb, capped[100_000].maxRssMb), 1.1));
  }
  if (!memory) throw new Error('the profile lists no size');
  return {
    section: { note: NOTE, columns: COLUMNS, rows, targets },
    largest: { scenario: `GET, ${largest} entries`, memory },
  };
}
