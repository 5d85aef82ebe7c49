import { writeInventory } from '../../cli/inventory/batch-writer';
import { createInventoryClient, InventoryApiError, inventoryPages } from '../../client/index';
import { comparePetIds } from '../../functions/inventory/repository';
import type { InventoryItem, PetStatus } from '../../functions/inventory/types';
import { startTestStack, type TestStack } from '../helpers/local-stack';

/**
 * `GET /inventory?limit=N&after=PETID` through the local gateway: 50,000 entries (negative, small and 19-digit ids)
 * read page by page by following `Link: <…>; rel="next"` (RFC 8288, https://www.rfc-editor.org/rfc/rfc8288), and
 * every bad parameter refused before anything is read.
 */
const ENTRIES = 50_000;
const LIMIT = 5000;
const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold'];

function inventory(): InventoryItem[] {
  return Array.from({ length: ENTRIES }, (_, i) => ({
    petId: i % 2 === 0 ? String(i - ENTRIES / 2) : String(9_223_372_036_854_775_807n - BigInt(i) * 92_233_720_368_547n),
    quantity: i % 1000,
    status: STATUSES[i % 3] as PetStatus,
  }));
}

describe('GET /inventory in pages (limit, after, Link rel="next")', () => {
  let stack: TestStack;
  let ordered: string[];

  beforeAll(async () => {
    stack = await startTestStack({ inventory: [] });
    const items = inventory();
    await writeInventory(items, { client: stack.client, tableName: stack.tables.inventory, concurrency: 8 });
    ordered = items.map((item) => item.petId).sort(comparePetIds);
  }, 240_000);
  afterAll(async () => {
    await stack?.close();
  });

  it(`returns every entry exactly once, in order, when a client follows rel="next" with limit=${LIMIT}`, async () => {
    // Act: follow the Link of each answer until one has none.
    const seen: string[] = [];
    const links: (string | null)[] = [];
    let next: string | undefined = `${stack.url}/inventory?limit=${LIMIT}`;
    while (next !== undefined) {
      const response = await fetch(next, { headers: stack.authHeader });
      expect(response.status).toBe(200);
      const text = await response.text();
      seen.push(...[...text.matchAll(/"petId":(-?\d+)/g)].map((match) => match[1] as string));
      const link = response.headers.get('link');
      links.push(link);
      const target = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
      next = target === undefined ? undefined : new URL(target, stack.url).toString();
    }

    // Assess
    expect(seen).toEqual(ordered);
    expect(links).toHaveLength(ENTRIES / LIMIT);
    expect(links.at(-1)).toBeNull();
    expect(links[0]).toBe(`</v1/inventory?limit=${LIMIT}&after=${ordered[LIMIT - 1]}>; rel="next"`);
  }, 120_000);

  it('reads the same pages with the typed client, every petId a bigint', async () => {
    // Act
    const client = createInventoryClient({ baseUrl: stack.url, apiKey: stack.key });
    const pages: bigint[][] = [];
    for await (const page of inventoryPages(client, { limit: 7000 })) pages.push(page.map((item) => item.petId));

    // Assess
    expect(pages.map((page) => page.length)).toEqual([7000, 7000, 7000, 7000, 7000, 7000, 7000, 1000]);
    expect(pages.flat().map(String)).toEqual(ordered);
  }, 120_000);

  it.each([
    ['limit', 'limit=0'],
    ['limit', 'limit=-1'],
    ['limit', 'limit=10001'],
    ['limit', 'limit=2.5'],
    ['limit', 'limit='],
    ['limit', 'limit=1&limit=2'],
    ['after', 'limit=5&after=9223372036854775808'],
    ['after', 'after=-9223372036854775809'],
    ['after', 'after=abc'],
    ['after', 'after='],
  ])('answers 400 VALIDATION_FAILED naming %s for ?%s', async (name, query) => {
    // Act
    const response = await fetch(`${stack.url}/inventory?${query}`, { headers: stack.authHeader });
    const body = (await response.json()) as { code: string; message: string; status: number };

    // Assess
    expect(response.status).toBe(400);
    expect(response.headers.get('link')).toBeNull();
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(body.message.startsWith(`${name} `)).toBe(true);
  });

  it('rejects with the Error body when the typed client is refused a page', async () => {
    const client = createInventoryClient({ baseUrl: stack.url, apiKey: stack.key });
    const pages = inventoryPages(client, { limit: 20_000 });
    await expect(pages.next()).rejects.toMatchObject({
      name: InventoryApiError.name,
      status: 400,
      error: { code: 'VALIDATION_FAILED' },
    });
  });
});
