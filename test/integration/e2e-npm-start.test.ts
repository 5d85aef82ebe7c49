import { connect } from 'node:net';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoClient } from '../../functions/store/dynamo-client';
import { LOCAL_TABLE_NAMES } from '../../service/local-dynamodb';
import { type LocalApiProcess, startLocalApiProcess } from '../helpers/api-process';
import { call } from '../helpers/http';
import { putItems } from '../helpers/local-stack';

const READY_TIMEOUT_MS = 90_000;
const EXIT_TIMEOUT_MS = 20_000;

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// Only what a child process shows: start-up, the printed key, shutdown, and the feed fed by its stream poller. The routes are tested through the same
// gateway in process (local-gateway.test.ts and the other integration files).
describe('End to end: npm start', () => {
  let started: LocalApiProcess | undefined;
  afterEach(() => started?.kill());

  it(
    'starts with the demo inventory and a printed key the API accepts, throttles as staging, and stops on SIGINT with its DynamoDB Local',
    async () => {
      // Act
      started = await startLocalApiProcess({ readyTimeoutMs: READY_TIMEOUT_MS });
      const list = await call(started.baseUrl, 'GET', '/inventory', {
        headers: { Authorization: `Bearer ${started.apiKey}` },
        route: '/inventory',
      });
      const outcome = await started.stop(EXIT_TIMEOUT_MS);
      // Assess
      expect(list.status).toBe(200);
      expect(list.text).toContain('{"petId":9223372036854775807,');
      expect(started.output()).toContain('Throttling: 20 requests/s, burst 40, per method');
      expect(outcome).toEqual({ code: 0, signal: null });
      expect(started.output()).toContain('SIGINT: stopping the gateway and DynamoDB Local');
      expect(await portAccepts(started.dynamoPort)).toBe(false);
    },
    READY_TIMEOUT_MS + EXIT_TIMEOUT_MS,
  );
});

describe('End to end: a follower of the change feed through npm start', () => {
  const PETS = Array.from({ length: 10 }, (_, i) => String(900001 + i));
  let started: LocalApiProcess;
  let dynamo: DynamoDBClient;
  beforeAll(async () => {
    started = await startLocalApiProcess({ readyTimeoutMs: READY_TIMEOUT_MS });
    dynamo = createDynamoClient({
      endpoint: started.dynamoEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  }, READY_TIMEOUT_MS);
  afterAll(async () => {
    dynamo?.destroy();
    await started?.stop(EXIT_TIMEOUT_MS);
  }, EXIT_TIMEOUT_MS);
  const post = (body: string) =>
    call(started.baseUrl, 'POST', '/inventory/changes', {
      headers: { Authorization: `Bearer ${started.apiKey}`, 'Content-Type': 'application/json' },
      body,
      route: '/inventory/changes',
    });
  const auth = () => ({ Authorization: `Bearer ${started.apiKey}` });
  const cursorOf = (link: string | null, rel: string) =>
    new RegExp(`cursor=([A-Za-z0-9_-]+)>; rel="${rel}"`).exec(link ?? '')?.[1];
  interface Event {
    id: string;
    petId: number;
    version: number;
    quantity: number;
    previousQuantity: number | null;
  }
  /** Sends `send` until it is not throttled; whether it applied (200) or was refused with nothing applied. */
  const applied = async (send: () => Promise<{ status: number }>): Promise<boolean> => {
    for (;;) {
      const { status } = await send();
      if (status !== 429) return status === 200;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  /** The feed's events from `cursor` until none is left, and the cursor after them. */
  const readFeed = async (cursor: string, limit: number) => {
    const events: Event[] = [];
    for (let next = cursor; ; ) {
      const page = await call(started.baseUrl, 'GET', `/inventory/changes?limit=${limit}&cursor=${next}`, {
        headers: auth(),
        route: '/inventory/changes',
      });
      expect(page.status).toBe(200);
      const items = (page.json as { items: Event[] }).items;
      events.push(...items);
      next = cursorOf(page.headers.get('link'), 'next') as string;
      if (items.length === 0) return { events, cursor: next };
    }
  };

  it('sees every applied change of 6 writers and 2 batchers once, each pet’s versions contiguous, its deltas its stock', async () => {
    // Prepare: the list's position, then 10 pets created (an import's creations are events too).
    const list = await call(started.baseUrl, 'GET', '/inventory?limit=1', { headers: auth(), route: '/inventory' });
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

    // Act: the follower polls while the writers write.
    const events: Event[] = [];
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
        const body = JSON.stringify({ adjustBy, reason: 'correction' });
        const send = () =>
          call(started.baseUrl, 'PATCH', `/inventory/${petId}`, {
            headers: { ...auth(), 'Content-Type': 'application/json' },
            body,
            route: '/inventory/{petId}',
          });
        if (await applied(send)) count([petId]);
      }
    };
    const batcher = async (b: number) => {
      for (let i = 0; i < 4; i++) {
        const petIds = [pet(b + i), pet(b + i + 3), pet(b + i + 6)];
        const body = JSON.stringify({ changes: petIds.map((petId) => ({ petId: Number(petId), adjustBy: 2 })) });
        const send = () => post(body);
        if (await applied(send)) count(petIds);
      }
    };
    await Promise.all([...[0, 1, 2, 3, 4, 5].map(writer), batcher(0), batcher(1)]);
    const entries = new Map(
      await Promise.all(
        PETS.map(async (petId) => {
          const entry = await call(started.baseUrl, 'GET', `/inventory/${petId}`, {
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
