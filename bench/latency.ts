import { Agent, request } from 'node:http';
import { type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { changeOriginAttribute, LAST_CHANGE } from '../functions/store/inventory-table';
import { apiGatewayProxyEvent, lambdaContext } from '../tooling/lambda-events';
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

/** p50/p99 of PATCH through the gateway, with and without compare-and-set, against the raw UpdateItem. */
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
}

/**
 * `PATCH /inventory/{petId}` through the local gateway (authorizer result cached, as on a warm stage), plain and
 * with `expectedQuantity`, against the handler's UpdateItem sent straight to the same DynamoDB Local; the three
 * alternate, each leading in turn, so that drift hits all. The benchmark is the pet's only writer, so it always
 * knows the stored quantity and every compare-and-set succeeds: what is measured is the cost of the condition.
 */
export async function measurePatch(options: {
  gatewayUrl: string;
  authHeader: Record<string, string>;
  client: DynamoDBClient;
  tableName: string;
  petId: string;
  iterations: number;
  warmup: number;
}): Promise<PatchResult> {
  let stored: number | undefined;
  let next = 0;
  let viaGateway: number[] = [];
  let viaGatewayCas: number[] = [];
  let viaRaw: number[] = [];
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
  const updateItem = async () => {
    const quantity = next++ % 1000;
    const origin = { source: 'api' as const, actor: 'bench', requestId: `bench-${next}`, at: new Date().toISOString() };
    const started = performance.now();
    await options.client.send(
      new UpdateItemCommand({
        TableName: options.tableName,
        Key: { petId: { N: options.petId } },
        UpdateExpression: `SET quantity = :quantity, ${LAST_CHANGE} = :change`,
        ConditionExpression: 'attribute_exists(petId)',
        ExpressionAttributeValues: { ':quantity': { N: String(quantity) }, ':change': changeOriginAttribute(origin) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    viaRaw.push(performance.now() - started);
    stored = quantity;
  };
  const tasks = [() => patch(viaGateway, false), () => patch(viaGatewayCas, true), updateItem];
  await alternate(options.warmup, tasks);
  viaGateway = [];
  viaGatewayCas = [];
  viaRaw = [];
  await alternate(options.iterations, tasks);
  const gatewayP50 = quantile(viaGateway, 0.5);
  const gatewayP99 = quantile(viaGateway, 0.99);
  const casP50 = quantile(viaGatewayCas, 0.5);
  const casP99 = quantile(viaGatewayCas, 0.99);
  const rawP50 = quantile(viaRaw, 0.5);
  const rawP99 = quantile(viaRaw, 0.99);
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
  };
}

/** Times of one list size: the handler in-process, the naive path in-process, and the handler via the gateway. */
export interface ListTimes {
  rounds: number;
  handlerMsMedian: number;
  naiveMsMedian: number;
  gatewayMsMedian: number;
  /** handler / naive: the list target. */
  handlerVsNaive: number;
  /** gateway / handler: what the local gateway adds. */
  gatewayVsHandler: number;
  bodyBytes: number;
  naiveBodyBytes: number;
  gatewayBodyBytes: number;
  /** What Lambda returns to API Gateway: the proxy result serialized, the body escaped inside it. */
  lambdaPayloadBytes: number;
}

/** `GET /inventory` over the current table, three ways, alternating. */
export async function measureList(options: {
  gatewayUrl: string;
  authHeader: Record<string, string>;
  handler: ApiHandler;
  naive: ApiHandler;
  rounds: number;
}): Promise<ListTimes> {
  const handlerMs: number[] = [];
  const naiveMs: number[] = [];
  const gatewayMs: number[] = [];
  let bodyBytes = 0;
  let naiveBodyBytes = 0;
  let gatewayBodyBytes = 0;
  let lambdaPayloadBytes = 0;
  let n = 0;
  const inProcess = async (fn: ApiHandler, into: number[]) => {
    const id = `bench-list-${n++}`;
    const started = performance.now();
    const result = await fn(
      apiGatewayProxyEvent({ requestContext: { requestId: id } }),
      lambdaContext({ requestId: id, timeoutMs: 29_000, memoryMb: 1024 }),
    );
    into.push(performance.now() - started);
    if (result.statusCode !== 200) throw new Error(`list answered ${result.statusCode}: ${result.body}`);
    return result;
  };
  await alternate(options.rounds, [
    async () => {
      const result = await inProcess(options.handler, handlerMs);
      bodyBytes = Buffer.byteLength(result.body);
      lambdaPayloadBytes = Buffer.byteLength(JSON.stringify(result));
    },
    async () => {
      naiveBodyBytes = Buffer.byteLength((await inProcess(options.naive, naiveMs)).body);
    },
    async () => {
      const started = performance.now();
      const response = await httpCall(`${options.gatewayUrl}/inventory`, 'GET', options.authHeader);
      gatewayMs.push(performance.now() - started);
      if (response.status !== 200) throw new Error(`GET /inventory answered ${response.status}`);
      gatewayBodyBytes = response.bytes;
    },
  ]);
  const handler = median(handlerMs);
  const naive = median(naiveMs);
  const gateway = median(gatewayMs);
  return {
    rounds: options.rounds,
    handlerMsMedian: round(handler),
    naiveMsMedian: round(naive),
    gatewayMsMedian: round(gateway),
    handlerVsNaive: ratio(handler, naive),
    gatewayVsHandler: ratio(gateway, handler),
    bodyBytes,
    naiveBodyBytes,
    gatewayBodyBytes,
    lambdaPayloadBytes,
  };
}
