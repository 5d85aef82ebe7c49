import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { run } from '../../cli/run';
import { LAST_CHANGE } from '../../functions/store/inventory-row';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { freshTables, snapshotTable, testClient, testEndpoint } from '../helpers/local-stack';

const ROWS = 30_000;
const STATUSES = ['available', 'pending', 'sold'] as const;

/** A 30,000-row import and its re-run through the CLI, with the rate it reached: a volume figure of the machine. */
describe('Load: inventory import at volume', () => {
  let client: DynamoDBClient;
  let dir: string;

  beforeAll(() => {
    client = testClient();
    dir = mkdtempSync(join(tmpdir(), 'import-volume-'));
  });
  afterAll(() => {
    client.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports 30,000 rows and a re-run leaves the same stock, nothing duplicated', async () => {
    // Prepare: ids counting down from the largest int64, every one past 2^53.
    const tables = await freshTables(client);
    const ids = Array.from({ length: ROWS }, (_, i) => String(9223372036854775807n - BigInt(i)));
    const file = join(dir, '30k.csv');
    writeFileSync(
      file,
      `petId,quantity,status\n${ids.map((id, i) => `${id},${(i * 7919) % 100_000},${STATUSES[i % 3]}`).join('\n')}\n`,
    );
    const cli = async () => {
      const io = aCapturedIo({ env: { INVENTORY_TABLE_NAME: tables.inventory }, cwd: dir });
      const code = await run(['inventory', 'import', file, '--endpoint', testEndpoint()], io);
      return { code, stdout: io.stdout.text };
    };

    // Act
    const first = await cli();
    const afterFirst = await snapshotTable(client, tables.inventory, { omit: [LAST_CHANGE] });
    const second = await cli();
    const afterSecond = await snapshotTable(client, tables.inventory, { omit: [LAST_CHANGE] });

    // Assess
    process.stdout.write(`  30,000-row import: ${first.stdout}  re-run: ${second.stdout}`);
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(afterSecond).toBe(afterFirst);
    expect(afterFirst.split('\n')).toHaveLength(ROWS);
    expect(afterFirst).toContain(`"petId",{"N":"${ids[ROWS - 1]}"}`);
  }, 300_000);
});
