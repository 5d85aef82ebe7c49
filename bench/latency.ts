import { Agent, request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import { type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { idempotencyConfig, idempotencyPayload } from '../functions/http/idempotency';
import { idempotencyTable } from '../functions/store/idempotency-table';
import { entryUpdate } from '../functions/store/inventory-write';
import { apiGatewayProxyEvent, lambdaContext } from '../local/lambda/events';
import { invokeStreamingHandler } from '../local/lambda/streaming';
import { alternate, median, quantile, ratio, round } from './stats';

type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

let agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One HTTP exchange with the local gateway over a kept-alive connection, as a client SDK would make it. */
export function httpCall(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; bytes: number }> {
  return exchange(url, method, headers, body).catch((error: NodeJS.ErrnoException) => {
    // A kept-alive connection the gateway closed while idle (its keep-alive timeout is 5 s) fails on reuse; the
    // benchmark's requests are idempotent, so one retry on a new connection is safe.
    if (error.code !== 'ECONNRESET') throw error;
    return exchange(url, method, headers, body);
  });
}

function exchange(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; bytes: number }> {
  return new Promise((resolveCall, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on('end', () => resolveCall({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Closes the kept-alive connections; later calls open new ones. */
export function closeHttp(): void {
  agent.destroy();
  agent = new Agent({ keepAlive: true, maxSockets: 1 });
}

/**
 * p50/p99 of PATCH through the gateway (plain, compare-and-set, adjustBy, adjustBy with an Idempotency-Key) against
 * the raw UpdateItem, and the Idempotency utility's own writes.
 */
export interface PatchResult {
  iterations: number;
  gatewayP50Ms: number;
  gatewayP99Ms: number;
  /** PATCH with `expectedQuantity` (compare-and-set) through the gateway. */
  gatewayCasP50Ms: number;
  gatewayCasP99Ms: number;
  rawUpdateItemP50Ms: number;
  rawUpdateItemP99Ms: number;
  ratioP50: number;
  ratioP99: number;
  /** PATCH with `expectedQuantity` / PATCH without, both through the gateway. */
  casRatioP50: number;
  casRatioP99: number;
  /** PATCH `{"adjustBy": n}` through the gateway (absent from results recorded before it was measured). */
  gatewayAdjustP50Ms?: number;
  gatewayAdjustP99Ms?: number;
  /** PATCH `{"adjustBy": n}` with a new `Idempotency-Key` each time (claim, apply, store the answer). */
  gatewayIdempotentP50Ms?: number;
  gatewayIdempotentP99Ms?: number;
  /** adjustBy / plain PATCH, and adjustBy with Idempotency-Key / plain PATCH. */
  adjustRatioP50?: number;
  idempotentRatioP50?: number;
  /**
   * The Idempotency utility's own two writes for a new key (its persistence layer's `saveInProgress` then
   * `saveSuccess`, nothing else), sent straight to the same DynamoDB Local.
   */
  utilityWritesP50Ms?: number;
  /**
   * (adjustBy PATCH p50 + the utility's two writes p50) / plain PATCH p50: an estimate (a sum of medians) of the least
   * a first-time Idempotency-Key can cost on the utility, whatever the code around it.
   */
  idempotentFloorRatioP50?: number;
}

/**
 * `PATCH /inventory/{petId}` through the local gateway (authorizer result cached, as on a warm stage), plain and
 * with `expectedQuantity`, against the handler's UpdateItem sent straight to the same DynamoDB Local; the three
 * alternate in a new random order each round, so that drift hits all. The benchmark is the pet's only writer, so it always
 * knows the stored quantity and every compare-and-set succeeds: what is measured is the cost of the condition.
 */
export async function measurePatch(options: {
  gatewayUrl: string;
  authHeader: Record<string, string>;
  client: DynamoDBClient;
  tableName: string;
  /** The idempotency table the gateway's PATCH uses: the utility's own writes are measured on it. */
  idempotencyTableName: string;
  petId: string;
  iterations: number;
  warmup: number;
}): Promise<PatchResult> {
  let stored: number | undefined;
  let next = 0;
  let viaGateway: number[] = [];
  let viaGatewayCas: number[] = [];
  let viaAdjust: number[] = [];
  let viaIdempotent: number[] = [];
  let viaRaw: number[] = [];
  let viaUtilityWrites: number[] = [];
  const headers = { ...options.authHeader, 'Content-Type': 'application/json' };
  const url = `${options.gatewayUrl}/inventory/${options.petId}`;
  const patch = async (into: number[], compareAndSet: boolean) => {
    const quantity = next++ % 1000;
    const expected = compareAndSet && stored !== undefined ? `,"expectedQuantity":${stored}` : '';
    const started = performance.now();
    const response = await httpCall(url, 'PATCH', headers, `{"quantity":${quantity}${expected}}`);
    into.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`PATCH answered ${response.status}`);
    stored = quantity;
  };
  // +1 on whatever a set left (at most 999), so it never leaves the range; each Idempotency-Key is new.
  const adjust = async (into: number[], idempotent: boolean) => {
    const keyed = idempotent
      ? { ...headers, 'Idempotency-Key': `bench-${process.pid}-${next++}-${Date.now()}` }
      : headers;
    const started = performance.now();
    const response = await httpCall(url, 'PATCH', keyed, '{"adjustBy":1}');
    into.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`PATCH adjustBy answered ${response.status}`);
    if (stored !== undefined) stored += 1;
  };
  const updateItem = async () => {
    const quantity = next++ % 1000;
    const origin = { source: 'api' as const, actor: 'bench', requestId: `bench-${next}`, at: new Date().toISOString() };
    // The handler's UpdateItem for a plain PATCH, the very request it sends (entryUpdate), straight to DynamoDB.
    const { input } = entryUpdate(options.tableName, options.petId, origin, {
      quantity: ':quantity',
      values: { ':quantity': { N: String(quantity) } },
    });
    const started = performance.now();
    await options.client.send(new UpdateItemCommand(input));
    viaRaw.push(performance.now() - started);
    stored = quantity;
  };
  // The two writes the utility adds to a first-time request, through its own persistence layer and configuration,
  // with the answer a PATCH keeps: what no code around the utility can take away.
  const store = idempotencyTable({ client: options.client, tableName: options.idempotencyTableName });
  store.configure({ config: idempotencyConfig(), keyPrefix: 'bench' });
  const answer = {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json' },
    body: `{"petId":${options.petId},"quantity":1,"status":"available"}`,
  };
  const utilityWrites = async () => {
    const payload = idempotencyPayload({
      keyId: 'bench',
      idempotencyKey: `floor-${process.pid}-${next++}-${Date.now()}`,
      request: { petId: options.petId, adjustBy: 1 },
    }) as JSONValue; // plain JSON: strings and a number
    const started = performance.now();
    await store.saveInProgress(payload, 10_000);
    await store.saveSuccess(payload, answer);
    viaUtilityWrites.push(performance.now() - started);
  };
  const tasks = [
    () => patch(viaGateway, false),
    () => patch(viaGatewayCas, true),
    () => adjust(viaAdjust, false),
    () => adjust(viaIdempotent, true),
    updateItem,
    utilityWrites,
  ];
  await alternate(options.warmup, tasks);
  viaGateway = [];
  viaGatewayCas = [];
  viaAdjust = [];
  viaIdempotent = [];
  viaRaw = [];
  viaUtilityWrites = [];
  await alternate(options.iterations, tasks);
  const gatewayP50 = quantile(viaGateway, 0.5);
  const gatewayP99 = quantile(viaGateway, 0.99);
  const casP50 = quantile(viaGatewayCas, 0.5);
  const casP99 = quantile(viaGatewayCas, 0.99);
  const adjustP50 = quantile(viaAdjust, 0.5);
  const idempotentP50 = quantile(viaIdempotent, 0.5);
  const rawP50 = quantile(viaRaw, 0.5);
  const rawP99 = quantile(viaRaw, 0.99);
  const utilityWritesP50 = quantile(viaUtilityWrites, 0.5);
  return {
    iterations: options.iterations,
    gatewayP50Ms: round(gatewayP50, 2),
    gatewayP99Ms: round(gatewayP99, 2),
    gatewayCasP50Ms: round(casP50, 2),
    gatewayCasP99Ms: round(casP99, 2),
    rawUpdateItemP50Ms: round(rawP50, 2),
    rawUpdateItemP99Ms: round(rawP99, 2),
    ratioP50: ratio(gatewayP50, rawP50),
    ratioP99: ratio(gatewayP99, rawP99),
    casRatioP50: ratio(casP50, gatewayP50),
    casRatioP99: ratio(casP99, gatewayP99),
    gatewayAdjustP50Ms: round(adjustP50, 2),
    gatewayAdjustP99Ms: round(quantile(viaAdjust, 0.99), 2),
    gatewayIdempotentP50Ms: round(idempotentP50, 2),
    gatewayIdempotentP99Ms: round(quantile(viaIdempotent, 0.99), 2),
    adjustRatioP50: ratio(adjustP50, gatewayP50),
    idempotentRatioP50: ratio(idempotentP50, gatewayP50),
    utilityWritesP50Ms: round(utilityWritesP50, 2),
    idempotentFloorRatioP50: ratio(adjustP50 + utilityWritesP50, gatewayP50),
  };
}

/** One streamed GET through the gateway: time to the response head, to the first body byte, to the last byte. */
interface StreamedGet {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  ttfbMs: number;
  ttlbMs: number;
  /** Body bytes as sent on the wire (compressed when gzip). */
  bytes: number;
  /** The body decoded (gunzipped when gzip), when asked for. */
  text?: string;
}

function streamedGet(url: string, headers: Record<string, string>, keepText: boolean): Promise<StreamedGet> {
  // As httpCall: a kept-alive connection the gateway closed while idle fails on reuse; one retry on a new one.
  return streamedGetOnce(url, headers, keepText).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ECONNRESET') throw error;
    return streamedGetOnce(url, headers, keepText);
  });
}

function streamedGetOnce(url: string, headers: Record<string, string>, keepText: boolean): Promise<StreamedGet> {
  return new Promise((resolveGet, reject) => {
    const started = performance.now();
    const req = request(url, { method: 'GET', headers, agent }, (res) => {
      let ttfbMs = 0;
      let bytes = 0;
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) ttfbMs = performance.now() - started;
        bytes += chunk.length;
        if (keepText) parts.push(chunk);
      });
      res.on('end', () => {
        const ttlbMs = performance.now() - started;
        const raw = Buffer.concat(parts);
        const text = keepText
          ? (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8')
          : undefined;
        resolveGet({ status: res.statusCode ?? 0, headers: res.headers, ttfbMs, ttlbMs, bytes, text });
      });
      res.on('error', reject);
      res.on('aborted', () => reject(new Error(`GET ${url}: the stream was cut off`)));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Times of one list size: the handler and the naive path in-process, and the handler through `npm start`. */
export interface ListTimes {
  rounds: number;
  /** The streaming handler in-process: to its prelude (first byte) and to its last byte. */
  handlerTtfbMsMedian: number;
  handlerMsMedian: number;
  naiveMsMedian: number;
  /** handler (last byte) / naive: the list target. */
  handlerVsNaive: number;
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
}

/** `GET /inventory` over the current table, four ways, alternating; the first gateway answers are checked whole. */
export async function measureList(options: {
  gatewayUrl: string;
  authHeader: Record<string, string>;
  handler: unknown;
  naive: ApiHandler;
  rounds: number;
  /** The exact body the list must answer (the seeded entries in petId order). */
  expectedBody: string;
}): Promise<ListTimes> {
  const handlerTtfb: number[] = [];
  const handlerMs: number[] = [];
  const naiveMs: number[] = [];
  const gateway: Record<'identity' | 'gzip', { ttfb: number[]; ttlb: number[]; bytes: number; exact?: boolean }> = {
    identity: { ttfb: [], ttlb: [], bytes: 0 },
    gzip: { ttfb: [], ttlb: [], bytes: 0 },
  };
  let naiveBodyBytes = 0;
  let n = 0;
  const context = (id: string) => lambdaContext({ requestId: id, timeoutMs: 600_000, memoryMb: 1024 });
  const viaGateway = async (coding: 'identity' | 'gzip') => {
    const figures = gateway[coding];
    const check = figures.exact === undefined;
    const response = await streamedGet(
      `${options.gatewayUrl}/inventory`,
      { ...options.authHeader, 'Accept-Encoding': coding },
      check,
    );
    if (response.status !== 200) throw new Error(`GET /inventory (${coding}) answered ${response.status}`);
    if (check) figures.exact = response.text === options.expectedBody;
    figures.ttfb.push(response.ttfbMs);
    figures.ttlb.push(response.ttlbMs);
    figures.bytes = response.bytes;
  };
  await alternate(options.rounds, [
    async () => {
      const id = `bench-list-${n++}`;
      const started = performance.now();
      const { response, completion } = invokeStreamingHandler(
        options.handler,
        apiGatewayProxyEvent({ requestContext: { requestId: id } }),
        context(id),
      );
      const { statusCode, body } = await response;
      handlerTtfb.push(performance.now() - started);
      for await (const _ of body);
      await completion;
      handlerMs.push(performance.now() - started);
      if (statusCode !== 200) throw new Error(`list answered ${statusCode}`);
    },
    async () => {
      const id = `bench-naive-${n++}`;
      const started = performance.now();
      const result = await options.naive(apiGatewayProxyEvent({ requestContext: { requestId: id } }), context(id));
      naiveMs.push(performance.now() - started);
      if (result.statusCode !== 200) throw new Error(`naive list answered ${result.statusCode}`);
      naiveBodyBytes = Buffer.byteLength(result.body);
    },
    () => viaGateway('identity'),
    () => viaGateway('gzip'),
  ]);
  const handler = median(handlerMs);
  const naive = median(naiveMs);
  return {
    rounds: options.rounds,
    handlerTtfbMsMedian: round(median(handlerTtfb)),
    handlerMsMedian: round(handler),
    naiveMsMedian: round(naive),
    handlerVsNaive: ratio(handler, naive),
    gatewayTtfbMsMedian: round(median(gateway.identity.ttfb)),
    gatewayMsMedian: round(median(gateway.identity.ttlb)),
    gatewayGzipTtfbMsMedian: round(median(gateway.gzip.ttfb)),
    gatewayGzipMsMedian: round(median(gateway.gzip.ttlb)),
    identityBytes: gateway.identity.bytes,
    gzipBytes: gateway.gzip.bytes,
    naiveBodyBytes,
    exact: gateway.identity.exact === true && gateway.gzip.exact === true,
  };
}
