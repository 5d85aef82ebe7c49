import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { run } from '../../cli/run';
import type { InventoryItem } from '../../functions/inventory/types';
import { LAST_CHANGE } from '../../functions/store/inventory-table';
import type { TableNames } from '../../tooling/tables';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { freshTables, putItems, snapshotTable, testClient, testEndpoint } from '../helpers/local-stack';

const EXTREMES: readonly InventoryItem[] = [
  { petId: '9223372036854775807', quantity: 2147483647, status: 'pending' },
  { petId: '-9223372036854775808', quantity: 0, status: 'sold' },
  { petId: '9007199254740993', quantity: 7, status: 'available' },
  { petId: '10', quantity: 1, status: 'available' },
  { petId: '9', quantity: 2, status: 'available' },
  { petId: '-1', quantity: 3, status: 'pending' },
];

describe('CLI: inventory export', () => {
  let client: DynamoDBClient;
  let source: TableNames;
  let dir: string;

  const cli = async (tables: TableNames, argv: string[]) => {
    const io = aCapturedIo({
      env: { INVENTORY_TABLE_NAME: tables.inventory, API_KEYS_TABLE_NAME: tables.apiKeys },
      cwd: dir,
    });
    const code = await run([...argv, '--endpoint', testEndpoint()], io);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };

  beforeAll(async () => {
    client = testClient();
    dir = mkdtempSync(join(tmpdir(), 'cli-export-'));
    source = await freshTables(client);
    await putItems(client, source.inventory, EXTREMES);
  });

  afterAll(() => {
    client.destroy();
  });

  it('writes JSON ordered by petId with every int64 digit, one entry per line', async () => {
    // Act
    const outcome = await cli(source, ['inventory', 'export']);

    // Assess
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe(
      [
        '[',
        '  {"petId":-9223372036854775808,"quantity":0,"status":"sold"},',
        '  {"petId":-1,"quantity":3,"status":"pending"},',
        '  {"petId":9,"quantity":2,"status":"available"},',
        '  {"petId":10,"quantity":1,"status":"available"},',
        '  {"petId":9007199254740993,"quantity":7,"status":"available"},',
        '  {"petId":9223372036854775807,"quantity":2147483647,"status":"pending"}',
        ']',
        '',
      ].join('\n'),
    );
    expect(outcome.stderr).toMatch(
      /^Exported 6 rows from inventory-\w+ \(DynamoDB at http:\/\/127\.0\.0\.1:\d+\)\.\n$/,
    );
  });

  it('writes CSV with the import header, ordered by petId', async () => {
    // Act
    const outcome = await cli(source, ['inventory', 'export', '--format', 'csv']);

    // Assess
    expect(outcome.code).toBe(0);
    expect(outcome.stdout.split('\n').slice(0, 3)).toEqual([
      'petId,quantity,status',
      '-9223372036854775808,0,sold',
      '-1,3,pending',
    ]);
    expect(outcome.stdout.trimEnd().split('\n').at(-1)).toBe('9223372036854775807,2147483647,pending');
  });

  it.each(['json', 'csv'])(
    'round-trips the largest and smallest int64 through export and import (%s)',
    async (format) => {
      // Prepare
      const exported = await cli(source, ['inventory', 'export', '--format', format]);
      const file = join(dir, `export.${format}`);
      writeFileSync(file, exported.stdout);
      const copy = await freshTables(client);

      // Act
      const imported = await cli(copy, ['inventory', 'import', file]);

      // Assess
      expect(imported.code).toBe(0);
      // The import signs each row it writes (lastChange); the stock is the export's.
      expect(await snapshotTable(client, copy.inventory, { omit: [LAST_CHANGE] })).toBe(
        await snapshotTable(client, source.inventory),
      );
    },
  );

  it('writes an empty JSON array for an empty table', async () => {
    // Prepare
    const empty = await freshTables(client);

    // Act
    const outcome = await cli(empty, ['inventory', 'export']);

    // Assess
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe('[]\n');
  });
});
