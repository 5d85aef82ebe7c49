/**
 * The PATCH table: through `npm start` (real authorizer, cached; kept-alive connection), the handler in-process and
 * the raw `UpdateItem`; and the batch against the PATCHes it stands for. Each task's name is its row.
 */
import { randomUUID } from 'node:crypto';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import { type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { idempotencyConfig, idempotencyPayload } from '../functions/http/idempotency';
import { MAX_QUANTITY } from '../functions/inventory/types';
import { idempotencyTable } from '../functions/store/idempotency-table';
import { changeWrite, entryUpdate } from '../functions/store/inventory-write';
import { inventoryUpdateEvent, lambdaContext } from '../local/lambda/events';
import { type Api, send } from './http';
import { interleaved, percentiles, ratio, type Section, target } from './measure';

/** `npm start`'s API with its DynamoDB Local and tables, which the in-process scenarios reach. */
export type Store = Api & { client: DynamoDBClient; tables: { inventory: string; idempotency: string } };

/** A row `of / over` (of several rows: a sum of p50s), its p50 held to `limit` when it has a target. */
type Ratio = { row: string; of: string[]; over: string; held?: [name: string, limit: number] };

const [PLAIN, RAW, HANDLER, ADJUST] = ['PATCH quantity', 'raw UpdateItem', 'the handler in-process', 'PATCH adjustBy'];
const [CAS, KEYED] = ['PATCH quantity, with expectedQuantity', 'PATCH adjustBy + Idempotency-Key'];
const UTILITY = "Idempotency utility's two writes alone (claim, store the answer)";
const PATCH_RATIOS: Ratio[] = [
  { row: 'gateway / raw', of: [PLAIN], over: RAW, held: ['gateway / raw UpdateItem', 1.5] },
  { row: 'handler in-process / raw: what a stage pays', of: [HANDLER], over: RAW },
  { row: "gateway / handler in-process: the stand-in's share", of: [PLAIN], over: HANDLER },
  { row: 'with / without expectedQuantity', of: [CAS], over: PLAIN, held: ['with expectedQuantity / without', 1.05] },
  { row: 'adjustBy / plain', of: [ADJUST], over: PLAIN, held: ['adjustBy / plain PATCH', 1.05] },
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
const BATCH = `POST /inventory/changes, ${BATCH_SIZE} adjustBy`;
const [PATCHES, BATCH1] = [`${BATCH_SIZE} sequential PATCH adjustBy`, 'POST /inventory/changes, 1 adjustBy'];
const BATCH_RATIO = `${BATCH_SIZE}-change batch / ${BATCH_SIZE} sequential PATCHes`;
const BATCH_RATIOS: Ratio[] = [
  { row: BATCH_RATIO, of: [BATCH], over: PATCHES, held: [BATCH_RATIO, 0.25] },
  { row: '1-change batch / one PATCH (no target)', of: [BATCH1], over: ADJUST },
];

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
  /** The next set: one step as `adjust` takes it, as the stock it moves from and the stock it sets. */
  const step = (petId: string) => {
    const from = stock.get(petId) ?? 0;
    return { from, to: from + adjust(petId) };
  };
  return { step, adjust };
}

/** Every PATCH scenario on pet `petId`, `iterations` of each after `warmup`, interleaved. */
export async function measurePatch(api: Store, petId: string, [warmup = 0, iterations = 1]: readonly number[]) {
  const { step, adjust } = await stockOf(api, [petId]);
  // Imported once this process's environment points at npm start's tables (Powertools reads it at import).
  const { handler } = await import('../functions/handlers/update-inventory');
  const patch = (body: object, headers?: Record<string, string>) =>
    send(api, 'PATCH', `/inventory/${petId}`, body, headers);
  const idempotency = idempotencyTable({ client: api.client, tableName: api.tables.idempotency });
  idempotency.configure({ config: idempotencyConfig(), keyPrefix: 'bench' });
  const tasks = {
    [PLAIN]: () => patch({ quantity: step(petId).to }),
    [CAS]: () => {
      const { from, to } = step(petId);
      return patch({ quantity: to, expectedQuantity: from });
    },
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
    async [HANDLER]() {
      const requestId = randomUUID();
      const event = inventoryUpdateEvent(petId, `{"quantity":${step(petId).to}}`, { requestContext: { requestId } });
      const answer = await handler(event, lambdaContext({ requestId }));
      if (answer.statusCode !== 200) throw new Error(`the update handler answered ${answer.statusCode}`);
    },
    // The very UpdateItem the handler sends for a plain PATCH.
    async [RAW]() {
      const origin = { source: 'api' as const, actor: 'bench', requestId: randomUUID(), at: new Date().toISOString() };
      const { write, signed } = changeWrite(petId, { quantity: step(petId).to }, origin);
      const { input } = entryUpdate(api.tables.inventory, petId, signed, write);
      await api.client.send(new UpdateItemCommand(input));
    },
  };
  return scenarioSection(await interleaved(tasks, iterations, { warmup }), PATCH_RATIOS, iterations);
}

/** The batch against sequential PATCHes of `pets`, and a 1-change batch against one PATCH of the first. */
export async function measureBatch(api: Api, pets: readonly string[], [warmup = 0, iterations = 1]: readonly number[]) {
  const { adjust } = await stockOf(api, pets);
  const first = pets[0] ?? '';
  const patch = (petId: string) => send(api, 'PATCH', `/inventory/${petId}`, { adjustBy: adjust(petId) });
  const post = (changing: readonly string[]) =>
    send(api, 'POST', '/inventory/changes', {
      changes: changing.map((petId) => ({ petId: BigInt(petId), adjustBy: adjust(petId) })),
    });
  const tasks = {
    [BATCH]: () => post(pets),
    async [PATCHES]() {
      for (const petId of pets) await patch(petId);
    },
    [BATCH1]: () => post([first]),
    [ADJUST]: () => patch(first),
  };
  return scenarioSection(await interleaved(tasks, iterations, { warmup, block: 10 }), BATCH_RATIOS, iterations);
}

/** Each task's p50 and p99, then each ratio: p50, and p99 for a ratio of one row. */
function scenarioSection(samples: Record<string, number[]>, ratios: Ratio[], iterations: number): Section {
  const rows = new Map(Object.entries(samples).map(([name, values]) => [name, percentiles(name, values)]));
  const at = (name: string, q: 1 | 2) => rows.get(name)?.[q] ?? Number.NaN;
  const computed = ratios.map(({ row, of, over, held }) => {
    const p50 = ratio(
      of.reduce((sum, name) => sum + at(name, 1), 0),
      at(over, 1),
    );
    const p99 = of.length === 1 ? `${ratio(at(of[0] ?? '', 2), at(over, 2))}x` : '-';
    return { row: [row, `${p50}x`, p99], target: held && target(`PATCH p50: ${held[0]}`, p50, held[1]) };
  });
  return {
    note: `${iterations} of each, interleaved.`,
    columns: ['path', 'p50 ms', 'p99 ms'],
    rows: [...rows.values(), ...computed.map((r) => r.row)],
    targets: computed.flatMap((r) => r.target ?? []),
  };
}
