import { createInventoryClient, InventoryApiError, inventoryPages } from '../../client/index';
import { call } from '../helpers/http';
import { describeInventoryPages } from '../helpers/inventory-pages';

/**
 * `GET /inventory?limit=N&after=PETID` through the local gateway on a small store (1,000 entries: negative, small
 * and 19-digit ids), and every bad parameter refused before anything is read. The same paging at 15,000 entries is a
 * load test (test/load/inventory-pages.test.ts).
 */
describeInventoryPages(
  'GET /inventory in pages (limit, after, Link rel="next")',
  { entries: 1000, limit: 100, clientLimit: 140 },
  ({ stack }) => {
    // Each rule of `limit` and `after`: test/unit/handlers.test.ts (listInventory, the stream and its pages).
    it.each([
      ['limit', 'limit=0'],
      ['after', 'limit=5&after=9223372036854775808'],
    ])('answers 400 VALIDATION_FAILED naming %s for ?%s', async (name, query) => {
      // Act
      // call() also holds the answer to openapi.yaml's listInventory 400.
      const response = await call(stack().url, 'GET', `/inventory?${query}`, {
        headers: stack().authHeader,
        route: '/inventory',
      });
      const body = response.json as { code: string; message: string; status: number };

      // Assess
      expect(response.status).toBe(400);
      expect(response.headers.get('link')).toBeNull();
      expect(body).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
      expect(body.message.startsWith(`${name} `)).toBe(true);
    });

    it('rejects with the Error body when the typed client is refused a page', async () => {
      const client = createInventoryClient({ baseUrl: stack().url, apiKey: stack().key });
      const pages = inventoryPages(client, { limit: 20_000 });
      await expect(pages.next()).rejects.toMatchObject({
        name: InventoryApiError.name,
        status: 400,
        error: { code: 'VALIDATION_FAILED' },
      });
    });
  },
);
