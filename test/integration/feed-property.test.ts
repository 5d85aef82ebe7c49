import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import fc from 'fast-check';
import { createHandler as createFeed } from '../../functions/handlers/list-inventory-changes';
import { createHandler as createRecorder } from '../../functions/handlers/record-history';
import type { ChangeEvent } from '../../functions/inventory/change-event';
import type { InventoryChange, PetChange } from '../../functions/inventory/types';
import { HistoryTable } from '../../functions/store/history-table';
import { toInventoryItem } from '../../functions/store/inventory-row';
import { InventoryTable } from '../../functions/store/inventory-table';
import { startStreamPoller } from '../../local/lambda/stream-poller';
import { tableStreamArn } from '../../local/tables';
import { aLambdaContext, anApiGatewayEvent } from '../fixtures/builders';
import { freshTables, putItems, testClient, testEndpoint } from '../helpers/local-stack';

const PETS = ['1', '2', '3', '9223372036854775807'];
const ORIGIN = { source: 'api' as const, actor: 'key_property', at: '' };

/** One writer's call: a PATCH's change of one pet, or a batch's changes of several. */
type Write = { pet: number; change: InventoryChange } | { batch: { pet: number; change: InventoryChange }[] };

const change: fc.Arbitrary<InventoryChange> = fc.oneof(
  fc
    .integer({ min: -3, max: 5 })
    .filter((n) => n !== 0)
    .map((adjustBy) => ({ adjustBy })),
  fc.integer({ min: 0, max: 20 }).map((quantity) => ({ quantity })),
  fc.record({ quantity: fc.integer({ min: 0, max: 20 }), expectedQuantity: fc.integer({ min: 0, max: 20 }) }),
);
const petChange = fc.record({ pet: fc.nat(PETS.length - 1), change });
const write: fc.Arbitrary<Write> = fc.oneof(
  petChange,
  fc.uniqueArray(petChange, { minLength: 2, maxLength: 3, selector: (c) => c.pet }).map((batch) => ({ batch })),
);

/** A small seeded random source (mulberry32), so a failing run replays with its seed. */
function randomFrom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The change feed's promise as a property, on DynamoDB Local: whatever the writers do (PATCHes and batches through
 * the real repository, three at once), in whatever order the stream's shards reach the history function (each pet's
 * records in order within its shard, shards racing for the counter, batches delivered again), a follower that reads
 * the feed through its handler, saves its cursor and restarts from it at random ends with the table's state.
 */
describe('Property: a follower of the change feed ends with the table', () => {
  let client: DynamoDBClient;

  beforeAll(() => {
    client = testClient();
  });
  afterAll(() => client.destroy());

  /** Every record of the table's stream, once its entries' versions add up to them (one record per change). */
  async function streamRecords(tableName: string): Promise<DynamoDBRecord[]> {
    const records: DynamoDBRecord[] = [];
    const poller = startStreamPoller({
      endpoint: testEndpoint(),
      streamArn: await tableStreamArn(client, tableName),
      handler: async (event) => {
        records.push(...event.Records);
        return { batchItemFailures: [] };
      },
      pollIntervalMs: 20,
      log: () => undefined,
    });
    try {
      const changes = (await tableState(tableName)).reduce((sum, [, item]) => sum + (item.version ?? 0), 0);
      for (let waited = 0; records.length < changes; waited += 20) {
        if (waited > 15_000) throw new Error(`stream: ${records.length} of ${changes} records`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await poller.stop();
    }
    return records;
  }

  async function tableState(tableName: string) {
    const { Items = [] } = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
    return Items.map((row) => toInventoryItem(row)).map((item) => [item.petId, item] as const);
  }

  /**
   * Delivers the records as Lambda would from `shards` shards (a pet's records in order in one shard), each shard's
   * batches one after the other, the shards at once; a batch is delivered again at random, as after a retry.
   */
  async function deliver(
    records: readonly DynamoDBRecord[],
    shards: number,
    random: () => number,
    history: HistoryTable,
  ) {
    const recordHistory = createRecorder({ history });
    const shardOf = (record: DynamoDBRecord) => PETS.indexOf(record.dynamodb?.Keys?.petId?.N ?? '') % shards;
    await Promise.all(
      Array.from({ length: shards }, async (_, shard) => {
        const mine = records.filter((record) => shardOf(record) === shard);
        for (let start = 0; start < mine.length; ) {
          const batch = mine.slice(start, start + 1 + Math.floor(random() * 6));
          await new Promise((resolve) => setTimeout(resolve, random() * 5));
          const { batchItemFailures } = await recordHistory({ Records: batch }, aLambdaContext());
          expect(batchItemFailures).toEqual([]);
          // Delivered again (a retry after a time-out) half of the time: from the batch's start or part-way in.
          if (random() < 0.5) start += Math.floor(random() * batch.length);
          else start += batch.length;
        }
      }),
    );
  }

  it('dedupes by id and applies by version to the very state of the table: each pet’s versions contiguous, its deltas adding up', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(write, { minLength: 5, maxLength: 20 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer(),
        async (writes, shards, seed) => {
          const random = randomFrom(seed);
          const tables = await freshTables(client, { stream: true });
          const inventory = new InventoryTable({ client, tableName: tables.inventory });
          const history = new HistoryTable({ client, tableName: tables.history });
          const feed = createFeed({ feed: history, retentionDays: 90 });

          // Act: the stock created, then three writers at once.
          await putItems(
            client,
            tables.inventory,
            PETS.map((petId) => ({ petId, quantity: 5, status: 'available' as const })),
          );
          let next = 0;
          const writer = async () => {
            for (let w = writes[next++]; w !== undefined; w = writes[next++]) {
              const origin = { ...ORIGIN, at: new Date().toISOString() };
              const sent =
                'batch' in w
                  ? inventory.applyChanges(
                      w.batch.map(({ pet, change }): PetChange => ({ petId: PETS[pet] as string, ...change })),
                      origin,
                    )
                  : inventory.applyChange(PETS[w.pet] as string, w.change, origin);
              // A refused change (409) applies nothing: it is no event either.
              await sent.catch((error: Error) => expect(error.name).toMatch(/Conflict/));
            }
          };
          await Promise.all([writer(), writer(), writer()]);
          const table = new Map(await tableState(tables.inventory));
          const records = await streamRecords(tables.inventory);

          // The follower reads while the records are delivered, and after, until it has every change.
          const follower = {
            cursor: undefined as string | undefined,
            state: new Map<string, { version: number; quantity: number; deltas: number }>(),
            seen: new Set<string>(),
          };
          /** Every event the feed served, by id: one per change, each pet's versions 1, 2, 3… */
          const served = new Map<string, ChangeEvent>();
          const read = async () => {
            const query = {
              limit: String(1 + Math.floor(random() * 7)),
              ...(follower.cursor ? { cursor: follower.cursor } : {}),
            };
            const answer = await feed(
              anApiGatewayEvent({ httpMethod: 'GET', body: null, queryStringParameters: query }),
              aLambdaContext(),
            );
            expect(answer.statusCode).toBe(200);
            // petIds as their digits: JSON.parse would round the largest.
            const body = answer.body.replace(/"petId":(-?\d+)/g, '"petId":"$1"');
            const events = (JSON.parse(body) as { items: ChangeEvent[] }).items;
            for (const event of events) {
              expect(served.get(event.id) ?? event).toEqual(event);
              served.set(event.id, event);
              const { petId } = event;
              const held = follower.state.get(petId) ?? { version: 0, quantity: 0, deltas: 0 };
              if (follower.seen.has(event.id) || event.version <= held.version) continue;
              // Contiguous: each pet's next event is its next version, its delta from the quantity the last left.
              expect([event.version, event.previousQuantity ?? 0]).toEqual([held.version + 1, held.quantity]);
              follower.seen.add(event.id);
              follower.state.set(petId, {
                version: event.version,
                quantity: event.quantity,
                deltas: held.deltas + event.quantity - (event.previousQuantity ?? 0),
              });
            }
            // Saved after applying, except at random: a restart then reads the same events again.
            if (random() < 0.8) follower.cursor = /cursor=([A-Za-z0-9_-]+)>/.exec(answer.headers?.Link as string)?.[1];
            return events.length;
          };
          let delivered = false;
          const following = (async () => {
            while (!delivered) await read();
          })();
          await deliver(records, shards, random, history);
          delivered = true;
          await following;
          for (const deadline = Date.now() + 30_000; follower.seen.size < records.length; ) {
            if (Date.now() > deadline)
              throw new Error(`the feed stopped after ${follower.seen.size} of ${records.length} changes`);
            if ((await read()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
          }

          // Assess
          expect(follower.seen.size).toBe(records.length);
          expect(served.size).toBe(records.length);
          for (const petId of PETS) {
            const versions = [...served.values()].filter((event) => event.petId === petId).map((e) => e.version);
            expect(versions).toEqual(Array.from({ length: table.get(petId)?.version ?? 0 }, (_, i) => i + 1));
          }
          for (const [petId, item] of table) {
            const held = follower.state.get(petId);
            expect([petId, held?.version, held?.quantity, held?.deltas]).toEqual([
              petId,
              item.version,
              item.quantity,
              item.quantity,
            ]);
          }
        },
      ),
      { numRuns: 3 },
    );
  }, 120_000);
});
