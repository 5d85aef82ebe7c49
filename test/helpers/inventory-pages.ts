import { writeInventory } from '../../cli/inventory/batch-writer';
import { createInventoryClient, inventoryPages } from '../../client/index';
import type { InventoryItem, PetStatus } from '../../functions/inventory/types';
import { comparePetIds } from '../fixtures/builders';
import { startTestStack, type TestStack } from './local-stack';

const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold'];

/** `entries` entries, half with negative or small ids and half with 19-digit ids. */
function inventory(entries: number): InventoryItem[] {
  return Array.from({ length: entries }, (_, i) => ({
    petId: i % 2 === 0 ? String(i - entries / 2) : String(9_223_372_036_854_775_807n - BigInt(i) * 92_233_720_368_547n),
    quantity: i % 1000,
    status: STATUSES[i % 3] as PetStatus,
  }));
}

/** What {@link describeInventoryPages} gives the tests of its file. */
export interface PagedStore {
  stack: () => TestStack;
  /** Every petId of the store, in petId order. */
  ordered: () => string[];
}

/**
 * `GET /inventory?limit=N&after=PETID` through the local gateway on a store of `entries` entries, read page by page
 * by following `Link: <…>; rel="next"` (RFC 8288, https://www.rfc-editor.org/rfc/rfc8288) and with the typed
 * client's page iterator. `more` adds the file's own tests on the same store.
 */
export function describeInventoryPages(
  title: string,
  { entries, limit, clientLimit }: { entries: number; limit: number; clientLimit: number },
  more: (store: PagedStore) => void = () => undefined,
): void {
  describe(title, () => {
    let stack: TestStack;
    let ordered: string[];

    beforeAll(async () => {
      stack = await startTestStack({ inventory: [] });
      const items = inventory(entries);
      await writeInventory(items, { client: stack.client, tableName: stack.tables.inventory, concurrency: 8 });
      ordered = items.map((item) => item.petId).sort(comparePetIds);
    }, 240_000);
    afterAll(async () => {
      await stack?.close();
    });

    it(`returns every entry exactly once, in order, when a client follows rel="next" with limit=${limit}`, async () => {
      // Act: follow the Link of each answer until one has none.
      const seen: string[] = [];
      const links: (string | null)[] = [];
      let next: string | undefined = `${stack.url}/inventory?limit=${limit}`;
      while (next !== undefined) {
        const response = await fetch(next, { headers: stack.authHeader });
        expect(response.status).toBe(200);
        const text = await response.text();
        seen.push(...[...text.matchAll(/"petId":(-?\d+)/g)].map((match) => match[1] as string));
        // Each answer also links the change feed (rel="changes"): only its rel="next" is the next page.
        const link = (response.headers.get('link') ?? '')
          .split(/,\s*(?=<)/)
          .find((value) => value.endsWith('rel="next"'));
        links.push(link ?? null);
        const target = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
        next = target === undefined ? undefined : new URL(target, stack.url).toString();
      }

      // Assess
      expect(seen).toEqual(ordered);
      expect(links).toHaveLength(Math.ceil(entries / limit));
      expect(links.at(-1)).toBeNull();
      expect(links[0]).toBe(`</v1/inventory?limit=${limit}&after=${ordered[limit - 1]}>; rel="next"`);
    }, 120_000);

    it(`reads the same pages with the typed client (limit=${clientLimit}), every petId a bigint`, async () => {
      // Act
      const client = createInventoryClient({ baseUrl: stack.url, apiKey: stack.key });
      const pages: bigint[][] = [];
      for await (const page of inventoryPages(client, { limit: clientLimit }))
        pages.push(page.map((item) => item.petId));

      // Assess
      const full = Math.floor(entries / clientLimit);
      const rest = entries % clientLimit;
      expect(pages.map((page) => page.length)).toEqual([
        ...Array.from({ length: full }, () => clientLimit),
        ...(rest > 0 ? [rest] : []),
      ]);
      expect(pages.flat().map(String)).toEqual(ordered);
    }, 120_000);

    more({ stack: () => stack, ordered: () => ordered });
  });
}
