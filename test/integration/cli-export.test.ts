import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../cli/run';
import { createHandler as createList, ENTRIES_PER_CHUNK } from '../../functions/handlers/list-inventory';
import type { InventoryItem } from '../../functions/inventory/types';
import { LAST_CHANGE } from '../../functions/store/inventory-row';
import { freePort } from '../../local/dynamodb-local';
import { importHandler, type LocalGateway, startLocalGateway } from '../../local/gateway';
import type { TableNames } from '../../service/local-dynamodb';
import { aFeedAt } from '../fixtures/builders';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { freshTables, snapshotTable, startTestStack, type TestStack, testEndpoint } from '../helpers/local-stack';
import { entriesBreakingAt } from '../helpers/streaming';

const EXTREMES: readonly InventoryItem[] = [
  { petId: '9223372036854775807', quantity: 2147483647, status: 'pending' },
  { petId: '-9223372036854775808', quantity: 0, status: 'sold' },
  { petId: '9007199254740993', quantity: 7, status: 'available' },
  { petId: '10', quantity: 1, status: 'available' },
  { petId: '9', quantity: 2, status: 'available' },
  { petId: '-1', quantity: 3, status: 'pending' },
];

/** A list function whose body fails past its first chunks, as a deployed one failing mid-stream. */
const BREAKING_LIST = createList({
  feed: aFeedAt(),
  repository: entriesBreakingAt(40 * ENTRIES_PER_CHUNK, 30 * ENTRIES_PER_CHUNK),
});

// Export reads GET /inventory through the API (the streamed, gzipped list); import writes to DynamoDB Local.
describe('CLI: inventory export', () => {
  let stack: TestStack;
  let breaking: LocalGateway;
  let dir: string;

  const cli = async (argv: string[], tables?: TableNames) => {
    const io = aCapturedIo({
      env: tables ? { INVENTORY_TABLE_NAME: tables.inventory, API_KEYS_TABLE_NAME: tables.apiKeys } : {},
      cwd: dir,
    });
    const code = await run(argv, io);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };
  const exportVia = (url: string, extra: string[] = [], key = stack.key) =>
    cli(['inventory', 'export', '--url', url, '--key', key, ...extra]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cli-export-'));
    stack = await startTestStack({ inventory: EXTREMES });
    breaking = await startLocalGateway(0, {
      log: () => undefined,
      loadHandler: async (name) =>
        name === 'list-inventory'
          ? (BREAKING_LIST as unknown as Awaited<ReturnType<typeof importHandler>>)
          : importHandler(name),
    });
  });

  afterAll(async () => {
    await breaking?.close();
    await stack?.close();
  });

  it('writes JSON ordered by petId with every int64 digit, one entry per line', async () => {
    // Act
    const outcome = await exportVia(stack.url);

    // Assess
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe(
      [
        '[',
        '  {"petId":-9223372036854775808,"quantity":0,"status":"sold","version":1},',
        '  {"petId":-1,"quantity":3,"status":"pending","version":1},',
        '  {"petId":9,"quantity":2,"status":"available","version":1},',
        '  {"petId":10,"quantity":1,"status":"available","version":1},',
        '  {"petId":9007199254740993,"quantity":7,"status":"available","version":1},',
        '  {"petId":9223372036854775807,"quantity":2147483647,"status":"pending","version":1}',
        ']',
        '',
      ].join('\n'),
    );
    expect(outcome.stderr).toBe(`Exported 6 rows from ${stack.url}/inventory.\n`);
  });

  it('writes CSV with the import header, ordered by petId', async () => {
    // Act
    const outcome = await exportVia(stack.url, ['--format', 'csv']);

    // Assess
    expect(outcome.code).toBe(0);
    expect(outcome.stdout.split('\n').slice(0, 3)).toEqual([
      'petId,quantity,status,version',
      '-9223372036854775808,0,sold,1',
      '-1,3,pending,1',
    ]);
    expect(outcome.stdout.trimEnd().split('\n').at(-1)).toBe('9223372036854775807,2147483647,pending,1');
  });

  it.each(['json', 'csv'])(
    'round-trips the largest and smallest int64 through export and import (%s)',
    async (format) => {
      // Prepare
      const exported = await exportVia(stack.url, ['--format', format]);
      const file = join(dir, `export.${format}`);
      writeFileSync(file, exported.stdout);
      const copy = await freshTables(stack.client);

      // Act
      const imported = await cli(['inventory', 'import', file, '--endpoint', testEndpoint()], copy);

      // Assess
      expect(imported.code).toBe(0);
      // The import signs each row it writes (lastChange); the stock is the export's.
      expect(await snapshotTable(stack.client, copy.inventory, { omit: [LAST_CHANGE] })).toBe(
        await snapshotTable(stack.client, stack.tables.inventory, { omit: [LAST_CHANGE] }),
      );
    },
  );

  it('fails (exit 1) and writes nothing when the list is cut off mid-stream', async () => {
    // Act
    const outcome = await exportVia(breaking.url);

    // Assess
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(/could not read the whole list from .*\/inventory .*nothing was written/);
  });

  it('says the API could not be reached (the network code), not that the list was cut off, when nothing listens', async () => {
    // A port just found free: nothing listens, so the connection is refused.
    const port = await freePort();
    const outcome = await exportVia(`http://127.0.0.1:${port}/v1`);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(
      new RegExp(`could not reach http://127\\.0\\.0\\.1:${port}/v1 \\(ECONNREFUSED\\); nothing was written`),
    );
  });

  it("fails (exit 1) with the API's answer when the key is refused", async () => {
    const outcome = await exportVia(stack.url, [], 'psk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toContain('answered 401 UNAUTHORIZED: ');
  });

  it('refuses to run without a key (exit 2)', async () => {
    const outcome = await cli(['inventory', 'export', '--url', stack.url]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('inventory export needs --key KEY');
  });
});
