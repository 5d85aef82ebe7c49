import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AttributeValue, type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { Webhook } from 'standardwebhooks';
import { run } from '../../cli/run';
import { changeEventJson } from '../../functions/inventory/change-event';
import { createDynamoClient } from '../../functions/store/dynamo-client';
import { toChangeEvent } from '../../functions/store/history-table';
import { LOCAL_TABLE_NAMES } from '../../service/local-dynamodb';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { type LocalApiProcess, startLocalApiProcess } from '../helpers/api-process';
import { call, jsonHeaders } from '../helpers/http';
import { putItems } from '../helpers/local-stack';
import { until } from '../helpers/until';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const READY_TIMEOUT_MS = 90_000;
const EXIT_TIMEOUT_MS = 20_000;
const WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
/** Each webhook id is refused this many times, then acknowledged. */
const WEBHOOK_REFUSALS = 2;

interface FeedEvent {
  id: string;
  petId: number;
  version: number;
  quantity: number;
  previousQuantity: number | null;
}

interface HistoryRow {
  petId: number;
  at: string;
  previousQuantity: number | null;
  quantity: number;
  previousStatus: string | null;
  status: string;
  source: string;
  actor: string;
  requestId?: string | null;
  reason?: string | null;
  reference?: string | null;
}

/**
 * What clients, an operator and a webhook receiver meet through one `npm start` whose stream pollers feed the history,
 * the change feed and the webhooks. Throttling is off, so no test meets another's 429s; each test changes pets no
 * other test touches, so none depends on another's order or leftovers.
 */
describe('npm start: every stock change kept, on record, in the feed and sent as a webhook', () => {
  let receiver: WebhookReceiver;
  let api: LocalApiProcess;
  let dynamo: DynamoDBClient;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'npm-start-changes-'));
    receiver = await startWebhookReceiver((_request, attempt) => (attempt <= WEBHOOK_REFUSALS ? 500 : 204));
    api = await startLocalApiProcess({
      env: {
        PETSTORE_WEBHOOK_URL: receiver.url,
        PETSTORE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        PETSTORE_RATE_LIMIT: '0',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
      },
      readyTimeoutMs: READY_TIMEOUT_MS,
    });
    dynamo = createDynamoClient({
      endpoint: api.dynamoEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  }, READY_TIMEOUT_MS + 10_000);
  afterAll(async () => {
    dynamo?.destroy();
    await api?.stop(EXIT_TIMEOUT_MS);
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  }, EXIT_TIMEOUT_MS + 10_000);

  const auth = () => ({ Authorization: `Bearer ${api.apiKey}` });
  const patch = (petId: string, body: string) =>
    call(api.baseUrl, 'PATCH', `/inventory/${petId}`, {
      headers: jsonHeaders(auth()),
      body,
      route: '/inventory/{petId}',
    });

  describe('a follower of the change feed', () => {
    const PETS = Array.from({ length: 10 }, (_, i) => String(900001 + i));
    const cursorOf = (link: string | null, rel: string) =>
      new RegExp(`cursor=([A-Za-z0-9_-]+)>; rel="${rel}"`).exec(link ?? '')?.[1];
    /** The feed's events from `cursor` until none is left, and the cursor after them. */
    const readFeed = async (cursor: string, limit: number) => {
      const events: FeedEvent[] = [];
      for (let next = cursor; ; ) {
        const page = await call(api.baseUrl, 'GET', `/inventory/changes?limit=${limit}&cursor=${next}`, {
          headers: auth(),
          route: '/inventory/changes',
        });
        expect(page.status).toBe(200);
        const items = (page.json as { items: FeedEvent[] }).items;
        events.push(...items);
        next = cursorOf(page.headers.get('link'), 'next') as string;
        if (items.length === 0) return { events, cursor: next };
      }
    };

    it('sees every applied change of 6 writers and 2 batchers once, each pet’s versions contiguous, its deltas its stock', async () => {
      // Prepare: the list's position, then 10 pets created (an import's creations are events too).
      const list = await call(api.baseUrl, 'GET', '/inventory?limit=1', { headers: auth(), route: '/inventory' });
      const start = cursorOf(list.headers.get('link'), 'changes') as string;
      await putItems(
        dynamo,
        LOCAL_TABLE_NAMES.inventory,
        PETS.map((petId) => ({ petId, quantity: 50, status: 'available' })),
      );
      const changes = new Map(PETS.map((petId) => [petId, 1]));
      const count = (petIds: readonly string[]) => {
        for (const petId of petIds) changes.set(petId, (changes.get(petId) ?? 0) + 1);
      };
      const pet = (i: number) => PETS[i % PETS.length] as string;

      // Act: the follower polls while the writers write; a change counts when it was applied (200).
      const events: FeedEvent[] = [];
      let writing = true;
      const follower = (async () => {
        let cursor = start;
        while (writing) {
          const read = await readFeed(cursor, 7);
          events.push(...read.events);
          cursor = read.cursor;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return cursor;
      })();
      const writer = async (w: number) => {
        for (let i = 0; i < 8; i++) {
          const petId = pet(w * 3 + i);
          const adjustBy = ((w + i) % 5) - 2 || 1;
          const response = await patch(petId, JSON.stringify({ adjustBy, reason: 'correction' }));
          if (response.status === 200) count([petId]);
        }
      };
      const batcher = async (b: number) => {
        for (let i = 0; i < 4; i++) {
          const petIds = [pet(b + i), pet(b + i + 3), pet(b + i + 6)];
          const response = await call(api.baseUrl, 'POST', '/inventory/changes', {
            headers: jsonHeaders(auth()),
            body: JSON.stringify({ changes: petIds.map((petId) => ({ petId: Number(petId), adjustBy: 2 })) }),
            route: '/inventory/changes',
          });
          if (response.status === 200) count(petIds);
        }
      };
      await Promise.all([...[0, 1, 2, 3, 4, 5].map(writer), batcher(0), batcher(1)]);
      const entries = new Map(
        await Promise.all(
          PETS.map(async (petId) => {
            const entry = await call(api.baseUrl, 'GET', `/inventory/${petId}`, {
              headers: auth(),
              route: '/inventory/{petId}',
            });
            return [petId, entry.json as { quantity: number; version: number }] as const;
          }),
        ),
      );
      const total = [...changes.values()].reduce((sum, n) => sum + n, 0);
      for (let waited = 0; events.filter((e) => PETS.includes(String(e.petId))).length < total; waited += 50) {
        if (waited > 20_000) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      writing = false;
      await follower;

      // Assess: each change once, in each pet's order, adding up to its stock and its version.
      const ours = events.filter((event) => PETS.includes(String(event.petId)));
      expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
      for (const petId of PETS) {
        const mine = ours.filter((event) => String(event.petId) === petId);
        const entry = entries.get(petId);
        expect(mine.map((event) => event.version)).toEqual(
          Array.from({ length: changes.get(petId) ?? 0 }, (_, i) => i + 1),
        );
        expect(mine.reduce((sum, event) => sum + event.quantity - (event.previousQuantity ?? 0), 0)).toBe(
          entry?.quantity,
        );
        expect(mine.at(-1)?.version).toBe(entry?.version);
      }
      // The same range read again is the same events.
      const again = await readFeed(start, 1000);
      expect(again.events.slice(0, events.length)).toEqual(events);
    }, 120_000);
  });

  /**
   * The receiver refuses each webhook twice: every change still arrives, signed as Standard Webhooks says
   * (spec/standard-webhooks.md, "Signature scheme"), with the feed's id, retried at least three times within 30 s
   * (docs/development.md). It gets every other test's changes too.
   */
  describe('webhooks to PETSTORE_WEBHOOK_URL', () => {
    const PET = '700';

    /** The acknowledged webhook of each id (its attempt after the refusals). */
    const acknowledged = () => {
      const attempts = new Map<string, number>();
      const byId = new Map<string, string>();
      for (const { headers, body } of receiver.received) {
        const id = String(headers['webhook-id']);
        const attempt = (attempts.get(id) ?? 0) + 1;
        attempts.set(id, attempt);
        if (attempt > WEBHOOK_REFUSALS) byId.set(id, body);
      }
      return byId;
    };

    /** Every attempt carries the three headers and a signature the library verifies over its exact body. */
    const expectAllSigned = () => {
      for (const { headers, body } of receiver.received) {
        expect(headers['webhook-timestamp']).toMatch(/^[0-9]+$/);
        expect(() => new Webhook(WEBHOOK_SECRET).verify(body, headers as Record<string, string>)).not.toThrow();
      }
    };

    const historyRowsOf = async (petId: string): Promise<Record<string, AttributeValue>[]> => {
      const { Items } = await dynamo.send(
        new QueryCommand({
          TableName: LOCAL_TABLE_NAMES.history,
          KeyConditionExpression: 'petId = :petId',
          ExpressionAttributeValues: { ':petId': { N: petId } },
        }),
      );
      return Items ?? [];
    };

    it('says at start where webhooks go', () => {
      expect(api.output()).toContain(`Webhooks: every change, signed, to ${receiver.url}`);
    });

    it('delivers every change made through the API after two refusals, with the id the feed gives it, its body the change event', async () => {
      // Prepare: a pet of this test's own, created as an import creates it.
      await putItems(dynamo, LOCAL_TABLE_NAMES.inventory, [{ petId: PET, quantity: 20, status: 'available' }]);

      // Act
      for (const adjustBy of [3, -1, 2]) expect((await patch(PET, JSON.stringify({ adjustBy }))).status).toBe(200);

      // Assess: its creation and the three changes, each as the feed has it; and the demo inventory's creation of
      // pet 3 (no test changes it), written at start as the stream pollers began.
      let feedRows: Record<string, AttributeValue>[] = [];
      await until(async () => {
        const rows = [...(await historyRowsOf(PET)), ...(await historyRowsOf('3'))];
        feedRows = rows.filter((row) => row.feedSequence !== undefined);
        const delivered = acknowledged();
        return feedRows.length === 5 && feedRows.every((row) => delivered.has(row.feedSequence?.N ?? ''));
      }, 40_000);
      const delivered = acknowledged();
      for (const row of feedRows)
        expect(delivered.get(row.feedSequence?.N ?? '')).toBe(changeEventJson(toChangeEvent(row)));
      expectAllSigned();
    }, 60_000);
  });

  /**
   * Compare-and-set PATCH loses no concurrent update, and every stock change (import or API) is on record in
   * `inventory history`, fed by the history function from DynamoDB Local's stream.
   */
  describe('no lost updates, and every stock change on record', () => {
    // What a client that must read its own write does: the strongly consistent read of one entry (the list is read
    // from an index, eventually consistent).
    const quantityOf = async (petId: string): Promise<number> => {
      const response = await call(api.baseUrl, 'GET', `/inventory/${petId}`, {
        headers: auth(),
        route: '/inventory/{petId}',
      });
      if (response.status !== 200)
        throw new Error(`GET /inventory/${petId} answered ${response.status}: ${response.text}`);
      return (response.json as { quantity: number }).quantity;
    };
    const cli = async (argv: string[]) => {
      const io = aCapturedIo({ env: { USER: 'ops-test' }, cwd: dir });
      const code = await run([...argv, '--endpoint', api.dynamoEndpoint], io);
      return { code, stdout: io.stdout.text, stderr: io.stderr.text };
    };
    const history = async (petId: string): Promise<HistoryRow[]> => {
      const outcome = await cli(['inventory', 'history', petId, '--format', 'json']);
      if (outcome.code !== 0) throw new Error(outcome.stderr);
      return JSON.parse(outcome.stdout) as HistoryRow[];
    };
    const historyUntil = async (petId: string, done: (rows: HistoryRow[]) => boolean, timeoutMs = 25_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const rows = await history(petId);
        if (done(rows)) return rows;
        if (Date.now() > deadline) throw new Error(`history of ${petId} incomplete: ${JSON.stringify(rows)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    it('loses no increment when 16 read-modify-write clients use expectedQuantity on one pet at once', async () => {
      // Prepare: the demo inventory's pet 10 holds 25. The increments land one after another (each a GET and a PATCH
      // through npm start), so their number, not the clients', sets the time: two each.
      const start = await quantityOf('10');
      const clients = 16;
      const incrementsEach = 2;
      let conflicts = 0;
      const increment = async () => {
        for (;;) {
          const current = await quantityOf('10');
          const response = await patch('10', `{"quantity":${current + 1},"expectedQuantity":${current}}`);
          if (response.status === 200) return;
          if (response.status !== 409) throw new Error(`PATCH answered ${response.status}: ${response.text}`);
          conflicts++;
        }
      };
      // Act
      await Promise.all(
        Array.from({ length: clients }, async () => {
          for (let i = 0; i < incrementsEach; i++) await increment();
        }),
      );
      // Assess
      expect(await quantityOf('10')).toBe(start + clients * incrementsEach);
      // The clients really raced: some of their writes were refused and retried.
      expect(conflicts).toBeGreaterThan(0);
    }, 120_000);

    it('answers a stale expectedQuantity with 409 CONFLICT naming the current quantity, and changes nothing', async () => {
      // Prepare
      const current = await quantityOf('1');
      // Act
      const response = await patch('1', `{"quantity":${current + 10},"expectedQuantity":${current - 1}}`);
      // Assess
      expect(response.status).toBe(409);
      expect(response.json).toEqual({
        code: 'CONFLICT',
        message: `The stored quantity of petId 1 is ${current}, not the expected ${current - 1}; nothing was changed.`,
        status: 409,
      });
      expect(await quantityOf('1')).toBe(current);
    });

    it('lists every change after an import and several PATCHes oldest first, each from the quantity before it, and nothing refused', async () => {
      // Prepare: an import that creates pet 500, changes pet 4 (demo: 1) and rewrites pet 2 (demo: 3) unchanged.
      writeFileSync(join(dir, 'arrivals.csv'), 'petId,quantity,status\n500,5,available\n4,6,pending\n2,3,available\n');
      const imported = await cli(['inventory', 'import', 'arrivals.csv']);
      expect(imported.code).toBe(0);

      // Act: changes, and refused attempts between them.
      const changes = [await patch('500', '{"quantity":7}'), await patch('500', '{"quantity":9,"expectedQuantity":7}')];
      const refused = [
        await patch('500', '{"quantity":1,"expectedQuantity":7}'), // stale: 409
        await patch('500', '{"quantity":-1}'), // 400
        await patch('500', '{"quantity":2,"expectedQuantity":"9"}'), // 400
        await patch('501', '{"quantity":1}'), // no entry: 404
      ];
      changes.push(await patch('500', '{"quantity":8,"expectedQuantity":9}'));
      const rows = await historyUntil('500', (found) => found.length >= 4);

      // Assess
      expect(changes.map((response) => response.status)).toEqual([200, 200, 200]);
      expect(refused.map((response) => response.status)).toEqual([409, 400, 400, 404]);
      expect(rows.map((row) => [row.previousQuantity, row.quantity])).toEqual([
        [null, 5],
        [5, 7],
        [7, 9],
        [9, 8],
      ]);
      for (let i = 1; i < rows.length; i++) expect(rows[i]?.previousQuantity).toBe(rows[i - 1]?.quantity);
      expect(rows.map((row) => row.source)).toEqual(['import', 'api', 'api', 'api']);
      expect(rows[0]?.actor).toMatch(/^import arrivals\.csv by ops-test@\S+ run [0-9a-f-]{36}$/);
      expect(rows[0]).not.toHaveProperty('requestId');
      for (const row of rows.slice(1)) {
        expect(row.actor).toMatch(/^key_[0-9a-f]+$/);
        expect(row.requestId).toMatch(/\S/);
      }
      expect(new Set(rows.slice(1).map((row) => row.requestId)).size).toBe(3);
      const times = rows.map((row) => row.at);
      expect([...times].sort()).toEqual(times);
      for (const at of times) expect(at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(await history('501')).toEqual([]);

      // The import's change of pet 4 is on record; its unchanged rewrite of pet 2 is not (only the demo seed is).
      const pet4 = await historyUntil('4', (found) => found.length >= 2);
      expect(pet4.map((row) => [row.previousQuantity, row.quantity, row.previousStatus, row.status])).toEqual([
        [null, 1, null, 'pending'],
        [1, 6, 'pending', 'pending'],
      ]);
      // A marker change written after the import: once it is on record, every earlier stream record has been read.
      expect((await patch('1', '{"quantity":13}')).status).toBe(200);
      await historyUntil('1', (found) => found.some((row) => row.quantity === 13));
      const pet2 = await history('2');
      expect(pet2.map((row) => [row.previousQuantity, row.quantity, row.actor])).toEqual([
        [null, 3, 'npm start demo inventory'],
      ]);
    }, 60_000);

    it('prints the history as a table, and only the changes since a time with --since', async () => {
      // Prepare: a pet of this test's own, created by an import and changed twice.
      writeFileSync(join(dir, 'pet-600.csv'), 'petId,quantity,status\n600,5,available\n');
      expect((await cli(['inventory', 'import', 'pet-600.csv'])).code).toBe(0);
      expect((await patch('600', '{"quantity":7}')).status).toBe(200);
      expect((await patch('600', '{"quantity":9}')).status).toBe(200);
      const rows = await historyUntil('600', (found) => found.length >= 3);
      const since = rows[2]?.at ?? '';
      // Act
      const table = await cli(['inventory', 'history', '600']);
      const recent = await cli(['inventory', 'history', '600', '--since', since, '--format', 'json']);
      // Assess
      expect(table.code).toBe(0);
      expect(table.stdout.split('\n')[0]).toMatch(
        /^at\s+quantity\s+status\s+reason\s+source\s+actor\s+requestId\s+reference$/,
      );
      expect(table.stdout).toMatch(/- -> 5\s+- -> available\s+import/);
      expect(table.stderr).toMatch(/^3 changes of petId 600 in petstore-inventory-history \(DynamoDB at /);
      expect((JSON.parse(recent.stdout) as HistoryRow[]).map((row) => row.quantity)).toEqual(
        rows.filter((row) => row.at >= since).map((row) => row.quantity),
      );
    });
  });
});
