/**
 * `npm run bench:stage` (bench/stage-main.ts): the PATCH figures of issue 20 measured where users feel them, for
 * whoever first has a stage: over HTTPS, through API Gateway, the authorizer's cache, Lambda and DynamoDB, with the
 * typed client (client/) a staff tool would use. On this machine `npm run bench` can only measure them through the
 * local gateway, where a PATCH is little more than its DynamoDB round trips; on a stage every PATCH also pays the
 * network, API Gateway and Lambda, which the ratios share.
 *
 * It alternates, in a new random order each round, a plain PATCH (`{"quantity": n}` with the stock the pet has), `{"adjustBy": ±1}`
 * and `{"adjustBy": ±1}` with a new `Idempotency-Key` each time (the first-time path: claim, apply, store the answer),
 * and prints p50/p99 of each and the two ratios with their targets (adjustBy ≤ 1.05×, Idempotency-Key ≤ 1.5× a plain
 * PATCH). The key must be a write key and the pet must exist; its stock is the same at the end as at the start (the
 * run checks), but every write is a real one: it is in the pet's history, and each Idempotency-Key is kept 24 hours.
 */
import { randomUUID } from 'node:crypto';
import { createInventoryClient, type InventoryClient } from '../client/index';
import { PATCH_RATIO_TARGETS, targetAtMost, targetsTable } from './report';
import { alternate, markdownTable, quantile, ratio, round } from './stats';

/** p50/p99 of the three PATCHes against a stage, and the ratios of issue 20. */
export interface StagePatchResult {
  baseUrl: string;
  iterations: number;
  plainP50Ms: number;
  plainP99Ms: number;
  adjustP50Ms: number;
  adjustP99Ms: number;
  idempotentP50Ms: number;
  idempotentP99Ms: number;
  /** adjustBy / plain PATCH, p50 (target ≤ 1.05). */
  adjustRatioP50: number;
  /** adjustBy with Idempotency-Key / plain PATCH, p50 (target ≤ 1.5). */
  idempotentRatioP50: number;
}

/** The pet's stock, read through the API. @throws Error naming the answer when it cannot be read. */
async function stockOf(client: InventoryClient, petId: bigint): Promise<number> {
  const { data, error, response } = await client.GET('/inventory/{petId}', { params: { path: { petId } } });
  if (!data) throw new Error(`GET /inventory/${petId} answered ${response.status}: ${error?.message ?? ''}`);
  return data.quantity;
}

/** Measures the three PATCHes of one pet on a stage; leaves its stock as it found it. */
export async function measureStagePatch(options: {
  baseUrl: string;
  apiKey: string;
  petId: bigint;
  iterations: number;
  warmup: number;
}): Promise<StagePatchResult> {
  const client = createInventoryClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  const petId = options.petId;
  const start = await stockOf(client, petId);
  // +1 then −1, so the stock never leaves start..start+1; below the top of the range either way.
  let up = start < 2_147_483_647;
  let stock = start;
  const timed = async (into: number[], call: () => Promise<{ response: Response; data?: unknown }>) => {
    const started = performance.now();
    const { response, data } = await call();
    into.push(performance.now() - started);
    if (response.status !== 200 || data === undefined) throw new Error(`PATCH answered ${response.status}`);
  };
  let plain: number[] = [];
  let adjust: number[] = [];
  let idempotent: number[] = [];
  const adjustBy = (into: number[], idempotencyKey?: string) => {
    const delta = up ? 1 : -1;
    up = !up;
    stock += delta;
    return timed(into, () =>
      client.PATCH('/inventory/{petId}', {
        params: { path: { petId }, ...(idempotencyKey ? { header: { 'Idempotency-Key': idempotencyKey } } : {}) },
        body: { adjustBy: delta },
      }),
    );
  };
  const tasks = [
    () =>
      timed(plain, () =>
        client.PATCH('/inventory/{petId}', { params: { path: { petId } }, body: { quantity: stock } }),
      ),
    () => adjustBy(adjust),
    () => adjustBy(idempotent, `bench-stage-${randomUUID()}`),
  ];
  try {
    await alternate(options.warmup, tasks);
    plain = [];
    adjust = [];
    idempotent = [];
    await alternate(options.iterations, tasks);
  } finally {
    // Back to the stock it had, whatever happened (a set, not an adjustment: nothing to reconcile).
    await client.PATCH('/inventory/{petId}', { params: { path: { petId } }, body: { quantity: start } });
  }
  const after = await stockOf(client, petId);
  if (after !== start) throw new Error(`pet ${petId}: stock ${after} after the run, ${start} before`);
  const p50 = (values: number[]) => quantile(values, 0.5);
  return {
    baseUrl: options.baseUrl,
    iterations: options.iterations,
    plainP50Ms: round(p50(plain), 2),
    plainP99Ms: round(quantile(plain, 0.99), 2),
    adjustP50Ms: round(p50(adjust), 2),
    adjustP99Ms: round(quantile(adjust, 0.99), 2),
    idempotentP50Ms: round(p50(idempotent), 2),
    idempotentP99Ms: round(quantile(idempotent, 0.99), 2),
    adjustRatioP50: ratio(p50(adjust), p50(plain)),
    idempotentRatioP50: ratio(p50(idempotent), p50(plain)),
  };
}

/** The figures as a Markdown table, with each ratio's target and whether it is met. */
export function renderStagePatch(result: StagePatchResult): string {
  const { adjust, idempotent } = PATCH_RATIO_TARGETS;
  return [
    `## PATCH /inventory/{petId} on ${result.baseUrl} (${result.iterations} of each, alternating)`,
    '',
    markdownTable(
      ['path', 'p50 ms', 'p99 ms'],
      [
        ['plain (quantity)', result.plainP50Ms, result.plainP99Ms],
        ['adjustBy', result.adjustP50Ms, result.adjustP99Ms],
        ['adjustBy + Idempotency-Key', result.idempotentP50Ms, result.idempotentP99Ms],
      ],
    ),
    '',
    targetsTable([
      targetAtMost(adjust.target, result.adjustRatioP50, adjust.limit),
      targetAtMost(idempotent.target, result.idempotentRatioP50, idempotent.limit),
    ]),
  ].join('\n');
}
