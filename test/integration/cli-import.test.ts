import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { run } from '../../cli/run';
import { LAST_CHANGE, toChangeOrigin } from '../../functions/store/inventory-row';
import { InventoryTable } from '../../functions/store/inventory-table';
import type { TableNames } from '../../service/local-dynamodb';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { csvOf, manyItems } from '../fixtures/inventory-files';
import { freshTables, putItems, snapshotTable, testClient, testEndpoint } from '../helpers/local-stack';

describe('CLI: inventory import', () => {
  let client: DynamoDBClient;
  let dir: string;
  /** This test's own fresh tables. */
  let tables: TableNames;

  /** Writes `content` to a file in this test's directory and returns its path. */
  const aFile = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  /** Runs the CLI in-process against the tables `into`. */
  const cli = async (
    into: TableNames,
    argv: string[],
    {
      endpoint = testEndpoint(),
      env = {},
      ...options
    }: { tty?: boolean; endpoint?: string; env?: Record<string, string> } = {},
  ) => {
    const io = aCapturedIo({
      env: { INVENTORY_TABLE_NAME: into.inventory, API_KEYS_TABLE_NAME: into.apiKeys, ...env },
      cwd: dir,
      ...options,
    });
    const code = await run([...argv, '--endpoint', endpoint], io);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };

  beforeAll(() => {
    client = testClient();
    dir = mkdtempSync(join(tmpdir(), 'cli-import-'));
  });

  beforeEach(async () => {
    tables = await freshTables(client);
  });

  afterAll(() => {
    client.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it("asks for --yes when the table is production's, however it was reached (--endpoint and its table name)", async () => {
    // Prepare: a table named as CloudFormation names production's.
    const production = { ...tables, inventory: 'PetStoreInventory-production-InventoryTable1A2B3C-XYZ' };
    const file = aFile('guarded.csv', 'petId,quantity,status\n1,5,available\n');
    // Act
    const refused = await cli(production, ['inventory', 'import', file]);
    // Assess: refused before any write (the table does not even exist here).
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /PetStoreInventory-production-InventoryTable1A2B3C-XYZ is production's inventory table: .*--yes/,
    );
  });

  // 1,200 rows are 12 transactions of 100, 8 in flight: more transactions than workers.
  it('imports 1,200 rows and a re-run leaves the same stock, nothing duplicated', async () => {
    // Prepare
    const items = manyItems(1_200);
    const file = aFile('1200.csv', csvOf(items));

    // Act: each run signs its rows (lastChange), so the stock is compared without the signature.
    const first = await cli(tables, ['inventory', 'import', file]);
    const afterFirst = await snapshotTable(client, tables.inventory, { omit: [LAST_CHANGE] });
    const second = await cli(tables, ['inventory', 'import', file]);
    const afterSecond = await snapshotTable(client, tables.inventory, { omit: [LAST_CHANGE] });

    // Assess
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^Imported 1200 rows from .*1200\.csv into inventory-\w+ \(DynamoDB at .*\) in [\d.]+ s, \d+ rows\/s/,
    );
    expect(first.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/, 1200 already as listed\.$/m);
    expect(afterSecond).toBe(afterFirst);
    const rows = afterFirst.split('\n');
    expect(rows).toHaveLength(1_200);
    expect(afterFirst).toContain('"petId",{"N":"9223372036854775807"}');
    expect(afterFirst).toContain(`"petId",{"N":"${items[1_199]?.petId}"}`);
  }, 60_000);

  it("creates entries at version 1 and continues an entry's version when a row changes it, whatever the file's version says", async () => {
    // Prepare: pet 1 created, then changed twice by imports; the second file carries a version of its own.
    const first = aFile('v1.csv', 'petId,quantity,status\n1,5,available\n2,1,sold\n');
    const second = aFile('v2.csv', 'petId,quantity,status,version\n1,6,available,1\n2,1,sold,7\n');
    const third = aFile('v3.json', '[{"petId":1,"quantity":6,"status":"pending"}]');
    const table = new InventoryTable({ client, tableName: tables.inventory });

    // Act
    const codes = [await cli(tables, ['inventory', 'import', first])];
    const created = [await table.get('1'), await table.get('2')];
    codes.push(await cli(tables, ['inventory', 'import', second]), await cli(tables, ['inventory', 'import', third]));

    // Assess: pet 2's row matched its entry, so nothing was written (no new version).
    expect(codes.map((outcome) => outcome.code)).toEqual([0, 0, 0]);
    expect(created.map((item) => item?.version)).toEqual([1, 1]);
    expect(await table.get('1')).toEqual({ petId: '1', quantity: 6, status: 'pending', version: 3 });
    expect(await table.get('2')).toEqual({ petId: '2', quantity: 1, status: 'sold', version: 1 });
  });

  it('writes nothing when any row is bad and names each bad line on stderr', async () => {
    // Prepare
    await putItems(client, tables.inventory, [{ petId: '1', quantity: 5, status: 'available' }]);
    const before = await snapshotTable(client, tables.inventory);
    const file = aFile(
      'bad.csv',
      [
        'petId,quantity,status',
        '1,99,sold', // good, and would change the stored row
        '2,-3,available', // line 3
        '9223372036854775808,1,sold', // line 4
        '3,1,lost', // line 5
        '4,1,sold', // good
        '1,1,sold', // line 7: duplicate of line 2
        '',
      ].join('\n'),
    );

    // Act
    const outcome = await cli(tables, ['inventory', 'import', file]);

    // Assess
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    const lines = outcome.stderr.trimEnd().split('\n');
    expect(lines.slice(0, -1).map((line) => line.replace(/^.*bad\.csv:(\d+): .*$/, '$1'))).toEqual([
      '3',
      '4',
      '5',
      '7',
    ]);
    expect(lines.at(-1)).toBe(`error: 4 bad rows in ${file} (csv); nothing was written`);
    expect(await snapshotTable(client, tables.inventory)).toBe(before);
  });

  it('imports a JSON array with int64 ids exactly', async () => {
    // Prepare
    const file = aFile(
      'stock.json',
      '[{"petId": 9007199254740993, "quantity": 1, "status": "sold"},\n {"petId": -9223372036854775808, "quantity": 2147483647, "status": "pending"}]',
    );

    // Act
    const outcome = await cli(tables, ['inventory', 'import', file]);

    // Assess
    expect(outcome.code).toBe(0);
    const snapshot = await snapshotTable(client, tables.inventory);
    expect(snapshot).toContain('"petId",{"N":"9007199254740993"}');
    expect(snapshot).toContain('"petId",{"N":"-9223372036854775808"}');
    expect(snapshot).toContain('"quantity",{"N":"2147483647"}');
  });

  it('signs every row it writes with who and why for the history: import, the file, the operator and a run id per run', async () => {
    // Prepare
    const items = manyItems(40);
    const file = aFile('signed.csv', csvOf(items));
    const changed = aFile('changed.csv', csvOf(items.map((item) => ({ ...item, quantity: item.quantity + 1 }))));
    const origins = async () => {
      const page = await client.send(new ScanCommand({ TableName: tables.inventory, ConsistentRead: true }));
      return (page.Items ?? []).map((item) => toChangeOrigin(item));
    };

    // Act
    const started = new Date().toISOString();
    await cli(tables, ['inventory', 'import', file], { env: { USER: 'ops-anna' } });
    const first = await origins();
    await cli(tables, ['inventory', 'import', changed], { env: { USER: 'ops-anna' } });
    const second = await origins();

    // Assess
    expect(first).toHaveLength(40);
    for (const origin of first) {
      expect(origin).toMatchObject({ source: 'import' });
      expect(origin?.actor).toMatch(/^import \S*signed\.csv by ops-anna@\S+ run [0-9a-f-]{36}$/);
      expect(origin?.at.localeCompare(started)).toBeGreaterThanOrEqual(0);
      expect(origin?.requestId).toBeUndefined();
    }
    expect(new Set(first.map((origin) => origin?.actor)).size).toBe(1);
    expect(second[0]?.actor).not.toBe(first[0]?.actor);
  });

  it('draws a progress bar on stderr when it is a terminal, and the one-line summary on stdout', async () => {
    // Prepare
    const file = aFile('tty.csv', csvOf(manyItems(500)));

    // Act
    const outcome = await cli(tables, ['inventory', 'import', file], { tty: true });

    // Assess
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toMatch(/\r\[#+\] 100% {2}500\/500 rows {2}\d+ rows\/s\n$/);
    expect(outcome.stdout.split('\n').filter(Boolean)).toHaveLength(1);
  });
});
