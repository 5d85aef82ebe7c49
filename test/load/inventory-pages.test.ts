import { describeInventoryPages } from '../helpers/inventory-pages';

/**
 * Paging at volume: 15,000 entries, 5,000 a page, every entry exactly once and in order. A page of 5,000 spans two
 * of the list's Query pages (its first asks for 2,500 entries) and a typed-client page of 7,000 spans two API pages,
 * which the small store's pages of 100 and 140 never do; more entries would only repeat them. Seeding them is most
 * of its time, so it runs with the load tests; the same tests on a small store, and the refused parameters, are in
 * test/integration/inventory-pages.test.ts.
 */
describeInventoryPages('GET /inventory in pages at volume (15,000 entries)', {
  entries: 15_000,
  limit: 5000,
  clientLimit: 7000,
});
