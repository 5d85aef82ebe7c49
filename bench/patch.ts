import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import { type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { idempotencyConfig, idempotencyPayload } from '../functions/http/idempotency';
import { idempotencyTable } from '../functions/store/idempotency-table';
import { entryUpdate } from '../functions/store/inventory-write';
import { httpCall } from './http';
import { ADJUST_TARGET } from './stage';
import { type Latencies, markdownTable, ratio, type Target, targetAtMost, timeAlternating } from './stats';

/** The PATCHes through the gateway, the handler's UpdateItem sent straight, and the Idempotency utility's writes. */
export type PatchPath =
  | 'plain'
  | 'expectedQuantity'
  | 'adjustBy'
  | 'idempotencyKey'
  | 'rawUpdateItem'
  | 'utilityWrites';

export interface PatchResult extends Latencies<PatchPath> {
  iterations: number;
}

/**
 * The four PATCHes through the local gateway, against the handler's own UpdateItem sent straight and the Idempotency
 * utility's two writes for a new key (the floor no code around it can lower). Every compare-and-set succeeds.
 */
export function measurePatch(options: {
  gatewayUrl: string;
  authHeader: Record<string, string>;
  client: DynamoDBClient;
  tableName: string;
  idempotencyTableName: string;
  petId: string;
  iterations: number;
  warmup: number;
}): Promise<PatchResult> {
  // Unknown until the first set: a compare-and-set before it sends no expectedQuantity.
  let stored: number | undefined;
  let next = 0;
  const headers = { ...options.authHeader, 'Content-Type': 'application/json' };
  const url = `${options.gatewayUrl}/inventory/${options.petId}`;
  const patch = async (body: string, extraHeaders: Record<string, string> = {}) => {
    const response = await httpCall(url, { method: 'PATCH', headers: { ...headers, ...extraHeaders }, body });
    if (response.status !== 200) throw new Error(`PATCH ${body} answered ${response.status}`);
  };
  // A set takes a quantity below 1000, an adjustment adds 1 to it: the stock never leaves the range.
  const set = (compareAndSet: boolean) => {
    const quantity = next++ % 1000;
    const expected = compareAndSet && stored !== undefined ? `,"expectedQuantity":${stored}` : '';
    stored = quantity;
    return patch(`{"quantity":${quantity}${expected}}`);
  };
  const adjust = (keyed: boolean) => {
    if (stored !== undefined) stored += 1;
    const key: Record<string, string> = keyed
      ? { 'Idempotency-Key': `bench-${process.pid}-${next++}-${Date.now()}` }
      : {};
    return patch('{"adjustBy":1}', key);
  };
  return timeAlternating(
    {
      plain: () => set(false),
      expectedQuantity: () => set(true),
      adjustBy: () => adjust(false),
      idempotencyKey: () => adjust(true),
      rawUpdateItem: async () => {
        stored = next++ % 1000;
        await options.client.send(rawUpdateItem(options.tableName, options.petId, stored, next));
      },
      utilityWrites: utilityWrites(options.client, options.idempotencyTableName, options.petId),
    },
    options.warmup,
    options.iterations,
  ).then((latencies) => ({ iterations: options.iterations, ...latencies }));
}

/** The very UpdateItem the handler sends for a plain PATCH (entryUpdate). */
function rawUpdateItem(tableName: string, petId: string, quantity: number, n: number): UpdateItemCommand {
  const origin = { source: 'api' as const, actor: 'bench', requestId: `bench-${n}`, at: new Date().toISOString() };
  const { input } = entryUpdate(tableName, petId, origin, {
    quantity: ':quantity',
    values: { ':quantity': { N: String(quantity) } },
  });
  return new UpdateItemCommand(input);
}

/** The utility's two writes for a new key, through its own persistence layer and configuration, keeping an answer. */
function utilityWrites(client: DynamoDBClient, tableName: string, petId: string): () => Promise<void> {
  const store = idempotencyTable({ client, tableName });
  store.configure({ config: idempotencyConfig(), keyPrefix: 'bench' });
  const answer = {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json' },
    body: `{"petId":${petId},"quantity":1,"status":"available"}`,
  };
  let n = 0;
  return async () => {
    const payload = idempotencyPayload({
      keyId: 'bench',
      idempotencyKey: `floor-${process.pid}-${n++}-${Date.now()}`,
      request: { petId, adjustBy: 1 },
    }) as JSONValue; // plain JSON: strings and a number
    await store.saveInProgress(payload, 10_000);
    await store.saveSuccess(payload, answer);
  };
}

/** Each ratio of the PATCH table, p50 and p99, from the measured latencies. */
export function patchRatios(patch: PatchResult) {
  const over = (path: PatchPath, baseline: PatchPath) =>
    [ratio(patch.p50Ms[path], patch.p50Ms[baseline]), ratio(patch.p99Ms[path], patch.p99Ms[baseline])] as const;
  return {
    gatewayVsRaw: over('plain', 'rawUpdateItem'),
    expectedQuantity: over('expectedQuantity', 'plain'),
    adjustBy: over('adjustBy', 'plain'),
    idempotencyKey: over('idempotencyKey', 'plain'),
    // A sum of medians: the least a first-time Idempotency-Key can cost on the utility, whatever the code around it.
    idempotencyFloorP50: ratio(patch.p50Ms.adjustBy + patch.p50Ms.utilityWrites, patch.p50Ms.plain),
  };
}

export function patchTable(patch: PatchResult): string {
  const r = patchRatios(patch);
  const path = (name: string, key: PatchPath) => [name, patch.p50Ms[key], patch.p99Ms[key]];
  const times = (name: string, [p50, p99]: readonly [number, number]) => [name, `${p50}x`, `${p99}x`];
  return [
    `${patch.iterations} of each, alternating.`,
    '',
    markdownTable(
      ['path', 'p50 ms', 'p99 ms'],
      [
        path('local gateway', 'plain'),
        path('local gateway, with expectedQuantity', 'expectedQuantity'),
        path('local gateway, adjustBy', 'adjustBy'),
        path('local gateway, adjustBy + Idempotency-Key', 'idempotencyKey'),
        path("Idempotency utility's two writes alone (claim, store the answer)", 'utilityWrites'),
        path('raw UpdateItem', 'rawUpdateItem'),
        times('gateway / raw', r.gatewayVsRaw),
        times('with / without expectedQuantity', r.expectedQuantity),
        times('adjustBy / plain', r.adjustBy),
        times('adjustBy + Idempotency-Key / plain (no target)', r.idempotencyKey),
        [
          "(adjustBy + the utility's two writes) / plain: the least Idempotency-Key costs",
          `${r.idempotencyFloorP50}x`,
          undefined,
        ],
      ],
    ),
  ].join('\n');
}

export function patchTargets(patch: PatchResult): Target[] {
  const r = patchRatios(patch);
  return [
    targetAtMost('PATCH p50: gateway / raw UpdateItem', r.gatewayVsRaw[0], 1.3),
    targetAtMost('PATCH p99: gateway / raw UpdateItem', r.gatewayVsRaw[1], 1.3),
    targetAtMost('PATCH p50: with expectedQuantity / without', r.expectedQuantity[0], 1.05),
    targetAtMost(ADJUST_TARGET.target, r.adjustBy[0], ADJUST_TARGET.limit),
  ];
}
