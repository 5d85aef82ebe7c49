/**
 * The PATCH table's timed scenarios ({@link PATCH_SCENARIOS}) and the ratios between them ({@link PATCH_RATIOS}): all
 * through `npm start` in `npm run bench`; those that only call the API against a stage in `npm run bench:stage`.
 */
import { randomUUID } from 'node:crypto';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import { type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { stringifyExactJson } from '../client/index';
import { idempotencyConfig, idempotencyPayload } from '../functions/http/idempotency';
import { MAX_QUANTITY } from '../functions/inventory/types';
import { idempotencyTable } from '../functions/store/idempotency-table';
import { entryUpdate } from '../functions/store/inventory-write';
import { httpCall } from './http';
import { alternate, columnsTable, quantile, ratio, round, type Target, target } from './stats';

/** What a scenario is given: the API it calls, one pet of it, and DynamoDB Local when the bench runs its own. */
export interface ScenarioContext {
  /** One call with the bench's key to `path` under the API's base URL; throws unless it answers 2xx. */
  call(method: string, path: string, body?: object, headers?: Record<string, string>): Promise<void>;
  /** `PATCH /inventory/{petId}` of the context's pet. */
  patch(body: object, headers?: Record<string, string>): Promise<void>;
  petId: string;
  /** The pets the batch scenarios change, the context's pet first. */
  pets: readonly string[];
  /** The pet's stock as the scenarios left it: a set writes it unchanged, an adjustment moves it ±1 in turn. */
  quantity: number;
  /**
   * The next adjustment of a pet (the context's by default): +1 or −1, alternately for each pet, so its stock stays
   * within one of where it began; counted as applied.
   */
  adjustment(petId?: string): number;
  dynamo?: { client: DynamoDBClient; tableName: string; idempotency: ReturnType<typeof idempotencyTable> };
}

/** One timed task: its name in the results, its row in the table, what one round of it does. */
export interface Scenario {
  name: string;
  row: string;
  /** It reaches DynamoDB Local directly, so it runs only in `npm run bench`. */
  local?: true;
  run(context: ScenarioContext): Promise<void>;
}

const ADJUST_BY: Scenario = {
  name: 'adjustBy',
  row: 'PATCH adjustBy',
  run: (c) => c.patch({ adjustBy: c.adjustment() }),
};

export const PATCH_SCENARIOS: readonly Scenario[] = [
  { name: 'plain', row: 'PATCH quantity', run: (c) => c.patch({ quantity: c.quantity }) },
  {
    name: 'expectedQuantity',
    row: 'PATCH quantity, with expectedQuantity',
    run: (c) => c.patch({ quantity: c.quantity, expectedQuantity: c.quantity }),
  },
  ADJUST_BY,
  {
    name: 'idempotencyKey',
    row: 'PATCH adjustBy + Idempotency-Key',
    run: (c) => c.patch({ adjustBy: c.adjustment() }, { 'Idempotency-Key': `bench-${randomUUID()}` }),
  },
  {
    name: 'utilityWrites',
    row: "Idempotency utility's two writes alone (claim, store the answer)",
    local: true,
    run: utilityWrites,
  },
  { name: 'rawUpdateItem', row: 'raw UpdateItem', local: true, run: rawUpdateItem },
];

/** A row `of / over` (of several: a sum of medians, p50 only); a target names the quantiles held to `limit`. */
export interface Ratio {
  row: string;
  of: readonly string[];
  over: string;
  target?: { name: string; limit: number; quantiles: readonly ('p50' | 'p99')[] };
}

const PATCH_RATIOS: readonly Ratio[] = [
  {
    row: 'gateway / raw',
    of: ['plain'],
    over: 'rawUpdateItem',
    target: { name: 'gateway / raw UpdateItem', limit: 1.3, quantiles: ['p50', 'p99'] },
  },
  {
    row: 'with / without expectedQuantity',
    of: ['expectedQuantity'],
    over: 'plain',
    target: { name: 'with expectedQuantity / without', limit: 1.05, quantiles: ['p50'] },
  },
  {
    row: 'adjustBy / plain',
    of: ['adjustBy'],
    over: 'plain',
    target: { name: 'adjustBy / plain PATCH', limit: 1.05, quantiles: ['p50'] },
  },
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

/**
 * The batch against the PATCHes it stands for. A round sends 100 PATCHes, so these run with a round count of their
 * own (`npm run bench` measures them apart from {@link PATCH_SCENARIOS}).
 */
export const BATCH_SCENARIOS: readonly Scenario[] = [
  { name: 'batch100', row: `POST /inventory/changes, ${BATCH_SIZE} adjustBy`, run: (c) => postChanges(c, c.pets) },
  { name: 'patches100', row: `${BATCH_SIZE} sequential PATCH adjustBy`, run: sequentialPatches },
  { name: 'batch1', row: 'POST /inventory/changes, 1 adjustBy', run: (c) => postChanges(c, [c.petId]) },
  ADJUST_BY,
];

export const BATCH_RATIOS: readonly Ratio[] = [
  {
    row: `${BATCH_SIZE}-change batch / ${BATCH_SIZE} sequential PATCHes`,
    of: ['batch100'],
    over: 'patches100',
    target: { name: `${BATCH_SIZE}-change batch / ${BATCH_SIZE} sequential PATCHes`, limit: 0.25, quantiles: ['p50'] },
  },
  { row: '1-change batch / one PATCH (no target)', of: ['batch1'], over: 'adjustBy' },
];

/** One `POST /inventory/changes` adjusting each of `pets` by ±1. */
function postChanges(c: ScenarioContext, pets: readonly string[]): Promise<void> {
  const changes = pets.map((petId) => ({ petId: BigInt(petId), adjustBy: c.adjustment(petId) }));
  return c.call('POST', '/inventory/changes', { changes });
}

/** What the batch replaces: a PATCH adjusting each of the context's pets by ±1, one after the other. */
async function sequentialPatches(c: ScenarioContext): Promise<void> {
  for (const petId of c.pets) await c.call('PATCH', `/inventory/${petId}`, { adjustBy: c.adjustment(petId) });
}

/** The very UpdateItem the handler sends for a plain PATCH (entryUpdate), straight to DynamoDB Local. */
async function rawUpdateItem(c: ScenarioContext): Promise<void> {
  if (!c.dynamo) throw new Error('raw UpdateItem needs DynamoDB Local');
  const origin = { source: 'api' as const, actor: 'bench', requestId: randomUUID(), at: new Date().toISOString() };
  const values = { ':quantity': { N: String(c.quantity) } };
  const { input } = entryUpdate(c.dynamo.tableName, c.petId, origin, { quantity: ':quantity', values });
  await c.dynamo.client.send(new UpdateItemCommand(input));
}

/** The utility's two writes for a new key, through its own persistence layer and configuration, keeping an answer. */
async function utilityWrites(c: ScenarioContext): Promise<void> {
  if (!c.dynamo) throw new Error("the utility's writes need DynamoDB Local");
  const request = { petId: c.petId, adjustBy: 1 };
  // Plain JSON: strings and a number.
  const payload = idempotencyPayload({ keyId: 'bench', idempotencyKey: randomUUID(), request }) as JSONValue;
  await c.dynamo.idempotency.saveInProgress(payload, 10_000);
  await c.dynamo.idempotency.saveSuccess(payload, {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json' },
    body: `{"petId":${c.petId},"quantity":1,"status":"available"}`,
  });
}

/** DynamoDB Local as the local scenarios reach it: the inventory table and the Idempotency utility's own layer. */
export function localDynamo(client: DynamoDBClient, tableName: string, idempotencyTableName: string) {
  const idempotency = idempotencyTable({ client, tableName: idempotencyTableName });
  idempotency.configure({ config: idempotencyConfig(), keyPrefix: 'bench' });
  return { client, tableName, idempotency };
}

/** The context of the scenarios on the API at `baseUrl`, its pet `petId` holding `quantity`. */
export function scenarioContext(options: {
  baseUrl: string;
  apiKey: string;
  petId: string;
  quantity: number;
  /** The pets of the batch scenarios after the context's (their stock well below the maximum). */
  otherPets?: readonly string[];
  dynamo?: ScenarioContext['dynamo'];
}): ScenarioContext {
  const headers = { Authorization: `Bearer ${options.apiKey}`, 'Content-Type': 'application/json' };
  // Whether each pet's next adjustment is +1; the context's pet starts down when its stock is at the maximum.
  const up = new Map([[options.petId, options.quantity < MAX_QUANTITY]]);
  const context: ScenarioContext = {
    petId: options.petId,
    pets: [options.petId, ...(options.otherPets ?? [])],
    quantity: options.quantity,
    dynamo: options.dynamo,
    async call(method, path, body, extra = {}) {
      // A petId of a batch is a bigint: written as a JSON number with all its digits.
      const text = body === undefined ? undefined : stringifyExactJson(body);
      const response = await httpCall(`${options.baseUrl}${path}`, {
        method,
        headers: { ...headers, ...extra },
        body: text,
      });
      if (response.status < 200 || response.status > 299)
        throw new Error(`${method} ${path} ${text ?? ''} answered ${response.status}`);
    },
    patch: (body, extra) => context.call('PATCH', `/inventory/${options.petId}`, body, extra),
    adjustment(petId = options.petId) {
      const delta = (up.get(petId) ?? true) ? 1 : -1;
      up.set(petId, delta < 0);
      if (petId === options.petId) context.quantity += delta;
      return delta;
    },
  };
  return context;
}

/** p50 and p99 (ms) of each scenario, by name, over `iterations` rounds. */
export interface ScenarioResult {
  iterations: number;
  p50Ms: Record<string, number>;
  p99Ms: Record<string, number>;
}

/** Times each of `scenarios` in {@link alternate} rounds: `warmup` rounds first (not kept), then `iterations`. */
export async function measureScenarios(
  scenarios: readonly Scenario[],
  context: ScenarioContext,
  warmup: number,
  iterations: number,
): Promise<ScenarioResult> {
  const samples = new Map(scenarios.map((scenario) => [scenario.name, [] as number[]]));
  const timed = scenarios.map((scenario) => async () => {
    const started = performance.now();
    await scenario.run(context);
    samples.get(scenario.name)?.push(performance.now() - started);
  });
  await alternate(warmup, timed);
  for (const times of samples.values()) times.length = 0;
  await alternate(iterations, timed);
  const at = (q: number) =>
    Object.fromEntries([...samples].map(([name, times]) => [name, round(quantile(times, q), 2)]));
  return { iterations, p50Ms: at(0.5), p99Ms: at(0.99) };
}

/** Each of `list` whose scenarios were all measured, p50 and (of one scenario) p99. */
function ratios(result: ScenarioResult, list: readonly Ratio[]) {
  const measured = (name: string) => result.p50Ms[name] !== undefined;
  return list
    .filter((r) => [...r.of, r.over].every(measured))
    .map((r) => {
      const sum = (quantiles: Record<string, number>) =>
        r.of.reduce((total, name) => total + (quantiles[name] ?? 0), 0);
      const p50 = ratio(sum(result.p50Ms), result.p50Ms[r.over] ?? 0);
      const p99 = r.of.length === 1 ? ratio(sum(result.p99Ms), result.p99Ms[r.over] ?? 0) : undefined;
      return { ...r, p50, p99 };
    });
}

/** The scenarios of `scenarios` measured, then the ratios of `ratioList` between them. */
export function patchTable(
  result: ScenarioResult,
  scenarios: readonly Scenario[] = PATCH_SCENARIOS,
  ratioList: readonly Ratio[] = PATCH_RATIOS,
): string {
  const rows: (string | number | undefined)[][] = scenarios
    .filter((s) => s.name in result.p50Ms)
    .map((s) => [s.row, result.p50Ms[s.name], result.p99Ms[s.name]]);
  const times = (value: number | undefined) => (value === undefined ? undefined : `${value}x`);
  for (const r of ratios(result, ratioList)) rows.push([r.row, times(r.p50), times(r.p99)]);
  const table = columnsTable(rows, [
    ['path', (row) => row[0]],
    ['p50 ms', (row) => row[1]],
    ['p99 ms', (row) => row[2]],
  ]);
  return `${result.iterations} of each, alternating.\n\n${table}`;
}

export function patchTargets(result: ScenarioResult, ratioList: readonly Ratio[] = PATCH_RATIOS): Target[] {
  return ratios(result, ratioList).flatMap(({ target: held, p50, p99 }) =>
    (held?.quantiles ?? []).map((q) =>
      target(`PATCH ${q}: ${held?.name}`, (q === 'p50' ? p50 : p99) ?? 0, held?.limit ?? 0),
    ),
  );
}

/** The pet's stock, read through the API. @throws Error naming the answer when it cannot be read. */
export async function stockOf(baseUrl: string, apiKey: string, petId: string): Promise<number> {
  const headers = { Authorization: `Bearer ${apiKey}` };
  const response = await httpCall(`${baseUrl}/inventory/${petId}`, { headers, keepText: true });
  if (response.status !== 200) throw new Error(`GET /inventory/${petId} answered ${response.status}: ${response.text}`);
  return (JSON.parse(response.text ?? '') as { quantity: number }).quantity;
}
