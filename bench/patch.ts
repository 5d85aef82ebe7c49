/**
 * The PATCH table (through `npm start`, the handler in-process, the raw `UpdateItem`) and the batch table
 * (`POST /inventory/changes` against the PATCHes it stands for), with the ratios between their rows.
 */
import { randomUUID } from 'node:crypto';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import { type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { stringifyExactJson } from '../client/index';
import { idempotencyConfig, idempotencyPayload } from '../functions/http/idempotency';
import { MAX_QUANTITY } from '../functions/inventory/types';
import { idempotencyTable } from '../functions/store/idempotency-table';
import { changeWrite, entryUpdate } from '../functions/store/inventory-write';
import { inventoryUpdateEvent, lambdaContext } from '../local/lambda/events';
import { call } from './http';
import { interleaved, quantile, ratio, round, type Section, target } from './measure';

/** What the scenarios reach: the API of `npm start`, its key, and its DynamoDB Local. */
export interface Api {
  baseUrl: string;
  apiKey: string;
  client: DynamoDBClient;
  tables: { inventory: string; idempotency: string };
}

/** A row `of / over` (of several: a sum of p50s, no p99), and the quantiles of it held to `limit`, if any. */
interface Ratio {
  row: string;
  of: readonly string[];
  over: string;
  held?: [name: string, limit: number, ...quantiles: ('p50' | 'p99')[]];
}

const PATCH_ROWS: Record<string, string> = {
  plain: 'PATCH quantity',
  expectedQuantity: 'PATCH quantity, with expectedQuantity',
  adjustBy: 'PATCH adjustBy',
  idempotencyKey: 'PATCH adjustBy + Idempotency-Key',
  utilityWrites: "Idempotency utility's two writes alone (claim, store the answer)",
  handler: 'the handler in-process (PATCH quantity, no gateway)',
  rawUpdateItem: 'raw UpdateItem',
};

const PATCH_RATIOS: readonly Ratio[] = [
  { row: 'gateway / raw', of: ['plain'], over: 'rawUpdateItem', held: ['gateway / raw UpdateItem', 1.3, 'p50', 'p99'] },
  { row: 'handler in-process / raw: what a stage pays', of: ['handler'], over: 'rawUpdateItem' },
  { row: "gateway / handler in-process: the stand-in's share", of: ['plain'], over: 'handler' },
  {
    row: 'with / without expectedQuantity',
    of: ['expectedQuantity'],
    over: 'plain',
    held: ['with expectedQuantity / without', 1.05, 'p50'],
  },
  { row: 'adjustBy / plain', of: ['adjustBy'], over: 'plain', held: ['adjustBy / plain PATCH', 1.05, 'p50'] },
  { row: 'adjustBy + Idempotency-Key / plain (no target)', of: ['idempotencyKey'], over: 'plain' },
  // What a first-time key costs on the utility if every line of ours around it cost nothing.
  {
    row: "(adjustBy + the utility's two writes) / plain: the least Idempotency-Key costs",
    of: ['adjustBy', 'utilityWrites'],
    over: 'plain',
  },
];

/** How many changes the large batch sends: the most one request may carry. */
export const BATCH_SIZE = 100;

const BATCH_ROWS: Record<string, string> = {
  batch100: `POST /inventory/changes, ${BATCH_SIZE} adjustBy`,
  patches100: `${BATCH_SIZE} sequential PATCH adjustBy`,
  batch1: 'POST /inventory/changes, 1 adjustBy',
  adjustBy: 'PATCH adjustBy',
};

const BATCH_RATIO = `${BATCH_SIZE}-change batch / ${BATCH_SIZE} sequential PATCHes`;
const BATCH_RATIOS: readonly Ratio[] = [
  { row: BATCH_RATIO, of: ['batch100'], over: 'patches100', held: [BATCH_RATIO, 0.25, 'p50'] },
  { row: '1-change batch / one PATCH (no target)', of: ['batch1'], over: 'adjustBy' },
];

/** One call with the bench's key under the API's base URL; throws unless it answers 2xx. */
async function send(api: Api, method: string, path: string, body?: object, headers: Record<string, string> = {}) {
  const auth = { Authorization: `Bearer ${api.apiKey}`, 'Content-Type': 'application/json', ...headers };
  // A petId of a batch is a bigint: written as a JSON number with all its digits.
  const text = body === undefined ? undefined : stringifyExactJson(body);
  const answer = await call(`${api.baseUrl}${path}`, method, auth, text);
  if (answer.status < 200 || answer.status > 299) throw new Error(`${method} ${path} answered ${answer.status}`);
  return answer;
}

/** The pet's stock, read through the API. */
export async function stockOf(api: Api, petId: string): Promise<number> {
  return (JSON.parse((await send(api, 'GET', `/inventory/${petId}`)).text) as { quantity: number }).quantity;
}

/** +1 or −1 for each pet in turn, so its stock stays within one of where it began (down first at the maximum). */
function adjuster(stock: Map<string, number>) {
  const up = new Map([...stock].map(([petId, quantity]) => [petId, quantity < MAX_QUANTITY]));
  return (petId: string) => {
    const delta = (up.get(petId) ?? true) ? 1 : -1;
    up.set(petId, delta < 0);
    stock.set(petId, (stock.get(petId) ?? 0) + delta);
    return delta;
  };
}

/** Every PATCH scenario on pet `petId`, `iterations` of each after `warmup`, interleaved. */
export async function measurePatch(api: Api, petId: string, [warmup = 0, iterations = 1]: readonly number[]) {
  const stock = new Map([[petId, await stockOf(api, petId)]]);
  // Imported once this process's environment points at npm start's tables (Powertools reads it at import).
  const { handler: updateHandler } = await import('../functions/handlers/update-inventory');
  const quantity = () => stock.get(petId) ?? 0;
  const adjust = adjuster(stock);
  const patch = (body: object, headers?: Record<string, string>) =>
    send(api, 'PATCH', `/inventory/${petId}`, body, headers);
  const idempotency = idempotencyTable({ client: api.client, tableName: api.tables.idempotency });
  idempotency.configure({ config: idempotencyConfig(), keyPrefix: 'bench' });
  const origin = () => ({
    source: 'api' as const,
    actor: 'bench',
    requestId: randomUUID(),
    at: new Date().toISOString(),
  });
  const tasks = {
    plain: () => patch({ quantity: quantity() }),
    expectedQuantity: () => patch({ quantity: quantity(), expectedQuantity: quantity() }),
    adjustBy: () => patch({ adjustBy: adjust(petId) }),
    idempotencyKey: () => patch({ adjustBy: adjust(petId) }, { 'Idempotency-Key': `bench-${randomUUID()}` }),
    // The utility's two writes for a new key, through its own persistence layer and configuration.
    async utilityWrites() {
      const request = { petId, adjustBy: 1 };
      const payload = idempotencyPayload({ keyId: 'bench', idempotencyKey: randomUUID(), request }) as JSONValue;
      await idempotency.saveInProgress(payload, 10_000);
      const body = `{"petId":${petId},"quantity":1,"status":"available"}`;
      await idempotency.saveSuccess(payload, { statusCode: 200, headers: {}, body });
    },
    // The deployed function's code in this process: the middy chain, validation, the same UpdateItem.
    async handler() {
      const requestId = randomUUID();
      const event = inventoryUpdateEvent(petId, `{"quantity":${quantity()}}`, { requestContext: { requestId } });
      const answer = await updateHandler(event, lambdaContext({ requestId }));
      if (answer.statusCode !== 200) throw new Error(`the update handler answered ${answer.statusCode}`);
    },
    // The very UpdateItem the handler sends for a plain PATCH, straight to DynamoDB Local.
    async rawUpdateItem() {
      const { write, signed } = changeWrite(petId, { quantity: quantity() }, origin());
      await api.client.send(new UpdateItemCommand(entryUpdate(api.tables.inventory, petId, signed, write).input));
    },
  };
  return scenarioSection(await interleaved(tasks, iterations, { warmup }), PATCH_ROWS, PATCH_RATIOS, iterations);
}

/** The batch against sequential PATCHes of `pets` (the first one also the 1-change batch's and the PATCH's). */
export async function measureBatch(api: Api, pets: readonly string[], [warmup = 0, iterations = 1]: readonly number[]) {
  const stock = new Map(await Promise.all(pets.map(async (petId) => [petId, await stockOf(api, petId)] as const)));
  const adjust = adjuster(stock);
  const first = pets[0] ?? '';
  const post = (changing: readonly string[]) =>
    send(api, 'POST', '/inventory/changes', {
      changes: changing.map((petId) => ({ petId: BigInt(petId), adjustBy: adjust(petId) })),
    });
  const tasks = {
    batch100: () => post(pets),
    async patches100() {
      for (const petId of pets) await send(api, 'PATCH', `/inventory/${petId}`, { adjustBy: adjust(petId) });
    },
    batch1: () => post([first]),
    adjustBy: () => send(api, 'PATCH', `/inventory/${first}`, { adjustBy: adjust(first) }),
  };
  const samples = await interleaved(tasks, iterations, { warmup, block: 10 });
  return scenarioSection(samples, BATCH_ROWS, BATCH_RATIOS, iterations);
}

/** Each scenario's p50 and p99, then each ratio: p50, and p99 for a ratio of one scenario. */
function scenarioSection(
  samples: Record<string, number[]>,
  rows: Record<string, string>,
  ratios: readonly Ratio[],
  iterations: number,
): Section {
  const at = (name: string, q: number) => round(quantile(samples[name] ?? [], q), 2);
  const sum = (of: readonly string[]) => of.reduce((total, name) => total + at(name, 0.5), 0);
  const computed = ratios.map((r) => {
    const p99 = r.of.length === 1 ? ratio(at(r.of[0] ?? '', 0.99), at(r.over, 0.99)) : undefined;
    return { ...r, p50: ratio(sum(r.of), at(r.over, 0.5)), p99 };
  });
  return {
    note: `${iterations} of each, interleaved.`,
    columns: ['path', 'p50 ms', 'p99 ms'],
    rows: [
      ...Object.entries(rows).map(([name, row]) => [row, at(name, 0.5), at(name, 0.99)]),
      ...computed.map((r) => [r.row, `${r.p50}x`, r.p99 === undefined ? '-' : `${r.p99}x`]),
    ],
    targets: computed.flatMap(({ held: [name, limit, ...quantiles] = ['', 0], p50, p99 }) =>
      quantiles.map((q) => target(`PATCH ${q}: ${name}`, (q === 'p50' ? p50 : p99) ?? 0, limit)),
    ),
  };
}
