/**
 * The PATCH table: through `npm start` (real authorizer, cached; kept-alive connection), the handler in-process and
 * the raw `UpdateItem`; and the batch against the PATCHes it stands for. Each task's name is its row.
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
export type Api = { baseUrl: string; apiKey: string; client: DynamoDBClient; tables: Record<string, string> };

/** A row `of / over` (of several rows: a sum of p50s), and the quantiles of it held to `limit`, if any. */
type Ratio = { row: string; of: string[]; over: string; held?: [name: string, limit: number, ...q: ('p50' | 'p99')[]] };

const [PLAIN, RAW, HANDLER, ADJUST] = ['PATCH quantity', 'raw UpdateItem', 'the handler in-process', 'PATCH adjustBy'];
const [CAS, KEYED] = ['PATCH quantity, with expectedQuantity', 'PATCH adjustBy + Idempotency-Key'];
const UTILITY = "Idempotency utility's two writes alone (claim, store the answer)";
const PATCH_RATIOS: Ratio[] = [
  { row: 'gateway / raw', of: [PLAIN], over: RAW, held: ['gateway / raw UpdateItem', 1.5, 'p50'] },
  { row: 'handler in-process / raw: what a stage pays', of: [HANDLER], over: RAW },
  { row: "gateway / handler in-process: the stand-in's share", of: [PLAIN], over: HANDLER },
  {
    row: 'with / without expectedQuantity',
    of: [CAS],
    over: PLAIN,
    held: ['with expectedQuantity / without', 1.05, 'p50'],
  },
  { row: 'adjustBy / plain', of: [ADJUST], over: PLAIN, held: ['adjustBy / plain PATCH', 1.05, 'p50'] },
  { row: 'adjustBy + Idempotency-Key / plain (no target)', of: [KEYED], over: PLAIN },
  // What a first-time key costs on the utility if every line of ours around it cost nothing.
  {
    row: "(adjustBy + the utility's two writes) / plain: the least Idempotency-Key costs",
    of: [ADJUST, UTILITY],
    over: PLAIN,
  },
];

/** The most changes one batch may carry. */
export const BATCH_SIZE = 100;
const [BATCH, PATCHES, BATCH1] = [
  `POST /inventory/changes, ${BATCH_SIZE} adjustBy`,
  `${BATCH_SIZE} sequential PATCH adjustBy`,
  'POST /inventory/changes, 1 adjustBy',
];
const BATCH_RATIO = `${BATCH_SIZE}-change batch / ${BATCH_SIZE} sequential PATCHes`;
const BATCH_RATIOS: Ratio[] = [
  { row: BATCH_RATIO, of: [BATCH], over: PATCHES, held: [BATCH_RATIO, 0.25, 'p50'] },
  { row: '1-change batch / one PATCH (no target)', of: [BATCH1], over: ADJUST },
];

/** One call with the bench's key; throws unless it answers 2xx. A batch's petIds are bigints, written exactly. */
async function send(api: Api, method: string, path: string, body?: object, headers: Record<string, string> = {}) {
  const auth = { Authorization: `Bearer ${api.apiKey}`, 'Content-Type': 'application/json', ...headers };
  const text = body === undefined ? undefined : stringifyExactJson(body);
  const answer = await call(`${api.baseUrl}${path}`, method, auth, text);
  if (answer.status < 200 || answer.status > 299) throw new Error(`${method} ${path} answered ${answer.status}`);
  return answer;
}

/** The pets' stock, and their next adjustment: +1 or −1 in turn, so each stays within one of where it began. */
async function stockOf(api: Api, pets: readonly string[]) {
  const stock = new Map<string, number>();
  for (const petId of pets) stock.set(petId, JSON.parse((await send(api, 'GET', `/inventory/${petId}`)).text).quantity);
  const up = new Map([...stock].map(([petId, quantity]) => [petId, quantity < MAX_QUANTITY]));
  const adjust = (petId: string) => {
    const delta = up.get(petId) ? 1 : -1;
    up.set(petId, delta < 0);
    stock.set(petId, (stock.get(petId) ?? 0) + delta);
    return delta;
  };
  return { quantity: (petId: string) => stock.get(petId) ?? 0, adjust };
}

/** Every PATCH scenario on pet `petId`, `iterations` of each after `warmup`, interleaved. */
export async function measurePatch(api: Api, petId: string, [warmup = 0, iterations = 1]: readonly number[]) {
  const { quantity, adjust } = await stockOf(api, [petId]);
  // Imported once this process's environment points at npm start's tables (Powertools reads it at import).
  const { handler } = await import('../functions/handlers/update-inventory');
  const patch = (body: object, headers?: Record<string, string>) =>
    send(api, 'PATCH', `/inventory/${petId}`, body, headers);
  const idempotency = idempotencyTable({ client: api.client, tableName: api.tables.idempotency ?? '' });
  idempotency.configure({ config: idempotencyConfig(), keyPrefix: 'bench' });
  const tasks = {
    [PLAIN]: () => patch({ quantity: quantity(petId) }),
    [CAS]: () => patch({ quantity: quantity(petId), expectedQuantity: quantity(petId) }),
    [ADJUST]: () => patch({ adjustBy: adjust(petId) }),
    [KEYED]: () => patch({ adjustBy: adjust(petId) }, { 'Idempotency-Key': `bench-${randomUUID()}` }),
    // Through the utility's own persistence layer and configuration, for a new key.
    async [UTILITY]() {
      const request = { petId, adjustBy: 1 };
      const payload = idempotencyPayload({ keyId: 'bench', idempotencyKey: randomUUID(), request }) as JSONValue;
      await idempotency.saveInProgress(payload, 10_000);
      const body = `{"petId":${petId},"quantity":1,"status":"available"}`;
      await idempotency.saveSuccess(payload, { statusCode: 200, headers: {}, body });
    },
    // The deployed function's code in this process: the middy chain, validation, the same UpdateItem.
    async [HANDLER]() {
      const requestId = randomUUID();
      const event = inventoryUpdateEvent(petId, `{"quantity":${quantity(petId)}}`, { requestContext: { requestId } });
      const answer = await handler(event, lambdaContext({ requestId }));
      if (answer.statusCode !== 200) throw new Error(`the update handler answered ${answer.statusCode}`);
    },
    // The very UpdateItem the handler sends for a plain PATCH, straight to DynamoDB Local.
    async [RAW]() {
      const origin = { source: 'api' as const, actor: 'bench', requestId: randomUUID(), at: new Date().toISOString() };
      const { write, signed } = changeWrite(petId, { quantity: quantity(petId) }, origin);
      await api.client.send(new UpdateItemCommand(entryUpdate(api.tables.inventory ?? '', petId, signed, write).input));
    },
  };
  return scenarioSection(await interleaved(tasks, iterations, { warmup }), PATCH_RATIOS, iterations);
}

/** The batch against sequential PATCHes of `pets`, and a 1-change batch against one PATCH of the first. */
export async function measureBatch(api: Api, pets: readonly string[], [warmup = 0, iterations = 1]: readonly number[]) {
  const { adjust } = await stockOf(api, pets);
  const first = pets[0] ?? '';
  const post = (changing: readonly string[]) =>
    send(api, 'POST', '/inventory/changes', {
      changes: changing.map((petId) => ({ petId: BigInt(petId), adjustBy: adjust(petId) })),
    });
  const tasks = {
    [BATCH]: () => post(pets),
    async [PATCHES]() {
      for (const petId of pets) await send(api, 'PATCH', `/inventory/${petId}`, { adjustBy: adjust(petId) });
    },
    [BATCH1]: () => post([first]),
    [ADJUST]: () => send(api, 'PATCH', `/inventory/${first}`, { adjustBy: adjust(first) }),
  };
  return scenarioSection(await interleaved(tasks, iterations, { warmup, block: 10 }), BATCH_RATIOS, iterations);
}

/** Each task's p50 and p99, then each ratio: p50, and p99 for a ratio of one row. */
function scenarioSection(samples: Record<string, number[]>, ratios: Ratio[], iterations: number): Section {
  const at = (name: string, q: number) => round(quantile(samples[name] ?? [], q), 2);
  const computed = ratios.map((r) => {
    const p50 = ratio(
      r.of.reduce((sum, name) => sum + at(name, 0.5), 0),
      at(r.over, 0.5),
    );
    return { ...r, p50, p99: r.of.length === 1 ? ratio(at(r.of[0] ?? '', 0.99), at(r.over, 0.99)) : undefined };
  });
  return {
    note: `${iterations} of each, interleaved.`,
    columns: ['path', 'p50 ms', 'p99 ms'],
    rows: [
      ...Object.keys(samples).map((name) => [name, at(name, 0.5), at(name, 0.99)]),
      ...computed.map((r) => [r.row, `${r.p50}x`, r.p99 === undefined ? '-' : `${r.p99}x`]),
    ],
    targets: computed.flatMap(({ held: [name, limit, ...quantiles] = ['', 0], p50, p99 }) =>
      quantiles.map((q) => target(`PATCH ${q}: ${name}`, (q === 'p50' ? p50 : p99) ?? 0, limit)),
    ),
  };
}
