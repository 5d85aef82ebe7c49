import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { run } from '../../cli/run';
import { LAST_CHANGE } from '../../functions/store/inventory-row';
import type { TableNames } from '../../service/local-dynamodb';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { countRows, csvOf, manyItems } from '../fixtures/inventory-files';
import { freshTables, snapshotTable, testClient, testEndpoint } from '../helpers/local-stack';
import { startStorageLine } from '../helpers/storage-faults';

/**
 * An import interrupted by DynamoDB going away, then finished by the same command: the CLI reaches DynamoDB Local
 * through a stand-in that closes its port and every connection once rows are landing, and opens it again. It races a
 * running import against the cut (how many rows land first depends on the machine), so it is a load test, not part
 * of `npm test`.
 */
describe('Load: an inventory import interrupted mid-way', () => {
  let client: DynamoDBClient;
  let dir: string;

  /** Runs the CLI in-process against `tables` at `endpoint`. */
  const cli = async (tables: TableNames, argv: string[], endpoint: string) => {
    const io = aCapturedIo({
      env: { INVENTORY_TABLE_NAME: tables.inventory, API_KEYS_TABLE_NAME: tables.apiKeys },
      cwd: dir,
    });
    const code = await run([...argv, '--endpoint', endpoint], io);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };

  beforeAll(() => {
    client = testClient();
    dir = mkdtempSync(join(tmpdir(), 'import-interrupted-'));
  });
  afterAll(() => {
    client.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops with "Import stopped after N of M rows" when DynamoDB goes away mid-import, and the same command then finishes it', async () => {
    // Prepare: the CLI's way to DynamoDB Local, which the test cuts mid-import and opens again.
    const storage = await startStorageLine(testEndpoint());
    try {
      const tables = await freshTables(client);
      const items = manyItems(3_000);
      const file = join(dir, '3k.csv');
      writeFileSync(file, csvOf(items));
      const once = await freshTables(client);
      await cli(once, ['inventory', 'import', file], testEndpoint());

      // Act: cut storage off as soon as rows are landing (500: the shared DynamoDB Local, warm, writes a few thousand
      // rows a second, and the rest of the 3,000 must still be on their way), then let the same command reach it again.
      let finished = false;
      const importing = cli(tables, ['inventory', 'import', file], storage.endpoint).finally(() => {
        finished = true;
      });
      while (!finished && (await countRows(client, tables.inventory)) < 500)
        await new Promise((r) => setTimeout(r, 20));
      expect(finished).toBe(false);
      await storage.stop();
      const stopped = await importing;
      await storage.resume();
      const rerun = await cli(tables, ['inventory', 'import', file], storage.endpoint);

      // Assess
      expect(stopped.code).toBe(1);
      const [, written] =
        /^error: Import stopped after (\d+) of 3000 rows \(Cannot reach DynamoDB at \S+ \(E[A-Z]+\).*\); run the same command again to finish\n$/.exec(
          stopped.stderr,
        ) ?? [];
      expect(Number(written)).toBeGreaterThan(0);
      expect(Number(written)).toBeLessThan(3_000);
      expect(rerun.code).toBe(0);
      expect(await snapshotTable(client, tables.inventory, { omit: [LAST_CHANGE] })).toBe(
        await snapshotTable(client, once.inventory, { omit: [LAST_CHANGE] }),
      );
    } finally {
      await storage.stop();
    }
    // 6,000 rows written (no time is asserted).
  }, 240_000);
});
