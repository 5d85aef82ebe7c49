import { encodeFeedCursor, FEED_START } from '../../functions/inventory/feed-query';
import { SETTLE_MS } from '../../functions/store/history-table';
import { call, jsonHeaders, type TestResponse } from '../helpers/http';
import { startTestStack, TEST_INVENTORY, type TestStack } from '../helpers/local-stack';

const ROUTE = '/inventory/changes';

/** An event as the test reads it (petIds here are all below 2^53 but one, which it reads as its digits). */
interface Event {
  id: string;
  petId: number;
  version: number;
  quantity: number;
  previousQuantity: number | null;
  at: string;
}

/**
 * `GET /inventory/changes` through the local gateway, over rows the history function wrote from the inventory table's
 * stream after real writes through the API. Every answer is checked against openapi.yaml by call().
 */
describe('GET /inventory/changes (listInventoryChanges)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ history: true });
  }, 30_000);
  afterAll(() => stack?.close());

  const get = (query = '') =>
    call(stack.url, 'GET', `/inventory/changes${query}`, { headers: stack.authHeader, route: ROUTE });
  const cursorOf = (response: TestResponse, rel = 'next') =>
    new RegExp(`<[^>]*[?&]cursor=([A-Za-z0-9_-]+)>; rel="${rel}"`).exec(response.headers.get('link') ?? '')?.[1];
  const patch = (petId: string, body: object) =>
    call(stack.url, 'PATCH', `/inventory/${petId}`, {
      headers: jsonHeaders(stack.authHeader),
      body: JSON.stringify(body),
      route: '/inventory/{petId}',
    });
  /** Follows the feed from `cursor`, `limit` a page, until `count` events came; every page and its Link. */
  const follow = async (cursor: string | undefined, count: number, limit = 100) => {
    const events: Event[] = [];
    const pages: TestResponse[] = [];
    const deadline = Date.now() + 30_000;
    let next = cursor;
    while (events.length < count) {
      if (Date.now() > deadline) throw new Error(`feed: ${events.length} of ${count} events`);
      const page = await get(`?limit=${limit}${next === undefined ? '' : `&cursor=${next}`}`);
      expect(page.status).toBe(200);
      pages.push(page);
      events.push(...(page.json as { items: Event[] }).items);
      next = cursorOf(page);
      expect(next).toBeDefined();
      if ((page.json as { items: Event[] }).items.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { events, pages, cursor: next };
  };

  it('serves the stock\'s creations from the start, then each change from the list\'s rel="changes" once, by pages', async () => {
    // Prepare: the stack's stock was imported (one creation each); the list names where the feed stands.
    const start = await follow(undefined, TEST_INVENTORY.length);
    const list = await call(stack.url, 'GET', '/inventory', { headers: stack.authHeader, route: '/inventory' });
    const position = cursorOf(list, 'changes');
    // Act: five changes of pet 1 (12 at first), then the feed in pages of 2.
    for (const adjustBy of [1, 2, 3, -4, 5]) expect((await patch('1', { adjustBy })).status).toBe(200);
    const followed = await follow(position, 6 + 5, 2);
    const again = await follow(position, 6 + 5, 5);
    // Assess
    expect(start.events.map((event) => [event.id, event.version, event.previousQuantity])).toEqual(
      TEST_INVENTORY.map((_, i) => [String(i + 1), 1, null]),
    );
    // The list names a position at least 5 s old (docs/api.md): here the start, so the creations it shows come again.
    expect(position).toBe(encodeFeedCursor(FEED_START));
    expect(followed.events.slice(0, 6)).toEqual(start.events);
    expect(followed.events.slice(6).map((event) => [event.id, event.petId, event.version, event.quantity])).toEqual([
      ['7', 1, 2, 13],
      ['8', 1, 3, 15],
      ['9', 1, 4, 18],
      ['10', 1, 5, 14],
      ['11', 1, 6, 19],
    ]);
    for (const page of followed.pages) expect((page.json as { items: unknown[] }).items.length).toBeLessThanOrEqual(2);
    expect(again.events).toEqual(followed.events);
    const times = followed.events.map((event) => event.at);
    expect([...times].sort()).toEqual(times);
    const entry = await call(stack.url, 'GET', '/inventory/1', {
      headers: stack.authHeader,
      route: '/inventory/{petId}',
    });
    expect(entry.json).toMatchObject({ quantity: 19, version: 6 });
  });

  it('answers an empty page with a cursor at the same place, aged from the read, so a follower asks again from there', async () => {
    // Prepare: a cursor after the last event, made older than the settle window (its event's time 2 s past it).
    const { cursor } = await follow(undefined, 6, 1000);
    const [sequence, at] = Buffer.from(cursor ?? '', 'base64url')
      .toString()
      .split('.')
      .map(Number);
    const old = encodeFeedCursor({ sequence: sequence as number, at: (at as number) - SETTLE_MS - 2000 });
    // Act
    const empty = await get(`?cursor=${old}`);
    // Assess: the same sequence number; its time no older than the read's settle window (no idle feed expires).
    const next = cursorOf(empty) ?? '';
    const [nextSequence, nextAt] = Buffer.from(next, 'base64url').toString().split('.').map(Number);
    expect(empty.json).toEqual({ items: [] });
    expect(nextSequence).toBe(sequence);
    expect(nextAt).toBeGreaterThan((at as number) - SETTLE_MS - 2000);
    expect(empty.headers.get('link')).toBe(`</v1/inventory/changes?cursor=${next}>; rel="next"`);
  });

  // Each rule of limit and cursor: test/unit/feed-query.test.ts.
  it.each([
    ['limit', '?limit=0'],
    ['cursor', '?cursor=bm90IG91cnM'],
  ])('answers 400 VALIDATION_FAILED naming %s for %s', async (name, query) => {
    const response = await get(query);
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect((response.json as { message: string }).message).toMatch(new RegExp(`^${name} `));
  });

  it('answers 410 CURSOR_EXPIRED for a cursor older than the history keeps, saying how to start again', async () => {
    const old = encodeFeedCursor({ sequence: 3, at: Date.now() - 91 * 86_400_000 });
    const response = await get(`?cursor=${old}`);
    expect(response.status).toBe(410);
    expect(response.json).toMatchObject({ code: 'CURSOR_EXPIRED', status: 410 });
    expect((response.json as { message: string }).message).toMatch(/GET \/inventory .*rel="changes"/);
  });

  it('answers 401 without a key', async () => {
    const response = await call(stack.url, 'GET', '/inventory/changes', { route: ROUTE });
    expect(response.status).toBe(401);
  });
});
