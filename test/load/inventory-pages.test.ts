import { describeInventoryPages } from '../helpers/inventory-pages';

/**
 * Paging at volume: 50,000 entries, 5,000 a page, every entry exactly once and in order. Seeding them is
 * most of its time, so it runs with the load tests; the same tests on a small store, and the refused parameters, are
 * in test/integration/inventory-pages.test.ts.
 */
describeInventoryPages('GET /inventory in pages at volume (50,000 entries)', {
  entries: 50_000,
  limit: 5000,
  clientLimit: 7000,
});
