/**
 * `npm run bench:stage`: plain, adjustBy and adjustBy with a new Idempotency-Key PATCHes on a deployed stage, with the
 * typed client. The pet's stock ends as it started, but each write is real (in its history; keys kept 24 hours).
 */
import { randomUUID } from 'node:crypto';
import { createInventoryClient, type InventoryClient } from '../client/index';
import { type Latencies, markdownTable, ratio, targetAtMost, targetsTable, timeAlternating } from './stats';

type StagePath = 'plain' | 'adjustBy' | 'idempotencyKey';

/** adjustBy against a plain PATCH: the one PATCH target both `npm run bench` and this check. */
export const ADJUST_TARGET = { target: 'PATCH p50: adjustBy / plain PATCH', limit: 1.05 } as const;

/** p50/p99 of the three PATCHes against a stage. */
export interface StagePatchResult extends Latencies<StagePath> {
  baseUrl: string;
  iterations: number;
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
  const path = { petId: options.petId };
  const start = await stockOf(client, options.petId);
  // +1 then −1, so the stock never leaves start..start+1; below the top of the range either way.
  let up = start < 2_147_483_647;
  let stock = start;
  const patch = async (body: { quantity: number } | { adjustBy: number }, idempotencyKey?: string) => {
    const header = idempotencyKey ? { header: { 'Idempotency-Key': idempotencyKey } } : {};
    const { response, data } = await client.PATCH('/inventory/{petId}', { params: { path, ...header }, body });
    if (response.status !== 200 || data === undefined) throw new Error(`PATCH answered ${response.status}`);
  };
  const adjustBy = (idempotencyKey?: string) => {
    const delta = up ? 1 : -1;
    up = !up;
    stock += delta;
    return patch({ adjustBy: delta }, idempotencyKey);
  };
  const tasks = {
    plain: () => patch({ quantity: stock }),
    adjustBy: () => adjustBy(),
    idempotencyKey: () => adjustBy(`bench-stage-${randomUUID()}`),
  };
  let latencies: Latencies<StagePath>;
  try {
    latencies = await timeAlternating(tasks, options.warmup, options.iterations);
  } finally {
    // Back to the stock it had, whatever happened (a set, not an adjustment: nothing to reconcile).
    await client.PATCH('/inventory/{petId}', { params: { path }, body: { quantity: start } });
  }
  const after = await stockOf(client, options.petId);
  if (after !== start) throw new Error(`pet ${options.petId}: stock ${after} after the run, ${start} before`);
  return { baseUrl: options.baseUrl, iterations: options.iterations, ...latencies };
}

/** The figures as a Markdown table, each PATCH's ratio to the plain one, and the adjustBy target. */
export function renderStagePatch(result: StagePatchResult): string {
  const row = (name: string, key: StagePath) => {
    const times = key === 'plain' ? undefined : `${ratio(result.p50Ms[key], result.p50Ms.plain)}x`;
    return [name, result.p50Ms[key], result.p99Ms[key], times];
  };
  const adjust = ratio(result.p50Ms.adjustBy, result.p50Ms.plain);
  return [
    `## PATCH /inventory/{petId} on ${result.baseUrl} (${result.iterations} of each, alternating)`,
    '',
    markdownTable(
      ['path', 'p50 ms', 'p99 ms', 'p50 / plain'],
      [
        row('plain (quantity)', 'plain'),
        row('adjustBy', 'adjustBy'),
        row('adjustBy + Idempotency-Key', 'idempotencyKey'),
      ],
    ),
    '',
    targetsTable([targetAtMost(ADJUST_TARGET.target, adjust, ADJUST_TARGET.limit)]),
  ].join('\n');
}
