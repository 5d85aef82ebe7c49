import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { run } from '../../cli/run';
import { PET_ID, toChangeOrigin } from '../../functions/store/inventory-row';
import type { TableNames } from '../../service/local-dynamodb';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { freshTables, putItems, testClient, testEndpoint } from '../helpers/local-stack';

describe('CLI: inventory apply (a change file in atomic batches of 100)', () => {
  let client: DynamoDBClient;
  let dir: string;

  /** Pets 1..n, each holding 10. */
  const stock = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ petId: String(i + 1), quantity: 10, status: 'available' as const }));

  /** A change file adjusting pets 1..n by +3, a delivery; `row(i)` replaces the row of pet i when it gives one. */
  const deliveryFile = (name: string, n: number, row: (pet: number) => string | undefined = () => undefined) => {
    const rows = Array.from({ length: n }, (_, i) => row(i + 1) ?? `${i + 1},3,received,delivery 4411`);
    const path = join(dir, name);
    writeFileSync(path, `petId,adjustBy,reason,reference\n${rows.join('\n')}\n`);
    return path;
  };

  const cli = async (tables: TableNames, argv: string[]) => {
    const io = aCapturedIo({ env: { INVENTORY_TABLE_NAME: tables.inventory, USER: 'ops-anna' }, cwd: dir });
    const code = await run([...argv, '--endpoint', testEndpoint()], io);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };

  /** Each pet's quantity and last change, by petId. */
  const entries = async (tables: TableNames) => {
    const page = await client.send(new ScanCommand({ TableName: tables.inventory, ConsistentRead: true }));
    return new Map(
      (page.Items ?? []).map((item) => [
        Number(item[PET_ID]?.N),
        { quantity: Number(item.quantity?.N), origin: toChangeOrigin(item) },
      ]),
    );
  };

  beforeAll(() => {
    client = testClient();
    dir = mkdtempSync(join(tmpdir(), 'cli-apply-'));
  });

  afterAll(() => {
    client.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies a 250-row delivery in three batches, each change signed as an import with its reason and reference', async () => {
    // Prepare
    const tables = await freshTables(client);
    await putItems(client, tables.inventory, stock(250));
    const file = deliveryFile('delivery.csv', 250);
    // Act
    const result = await cli(tables, ['inventory', 'apply', file]);
    // Assess
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(
      /^Applied 250 changes from .*delivery\.csv to inventory-\S+ \(.*\) in 3 batches of up to 100\.\n$/,
    );
    const after = await entries(tables);
    expect([...after.values()].map((entry) => entry.quantity)).toEqual(Array(250).fill(13));
    expect(after.get(1)?.origin).toMatchObject({
      source: 'import',
      actor: expect.stringMatching(/^import .*delivery\.csv by ops-anna@\S+ run [0-9a-f-]{36}$/),
      adjustBy: 3,
      reason: 'received',
      reference: 'delivery 4411',
    });
  });

  it('stops at a failing second batch: the first stays applied, the second and third are not, and the message names the line', async () => {
    // Prepare: pet 149 (line 150, the 49th change of batch 2) holds 10, so -20 would take it below 0.
    const tables = await freshTables(client);
    await putItems(client, tables.inventory, stock(250));
    const file = deliveryFile('short.csv', 250, (pet) => (pet === 149 ? '149,-20,loss,' : undefined));
    // Act
    const result = await cli(tables, ['inventory', 'apply', file]);
    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: batch 2 of 3 (lines 102–201) failed, nothing of it applied: line 150 (petId 149): ' +
        'The stored quantity of petId 149 is 10; adjusting it by -20 would take it below 0, so nothing was changed; ' +
        'batch 1 (lines 2–101) applied, batch 3 (lines 202–251) not applied\n',
    );
    const after = await entries(tables);
    const quantities = Array.from({ length: 250 }, (_, i) => after.get(i + 1)?.quantity);
    expect(quantities.slice(0, 100)).toEqual(Array(100).fill(13));
    expect(quantities.slice(100)).toEqual(Array(150).fill(10));
  });

  it('names every bad row with its line and applies nothing, and a dry run checks the file alone', async () => {
    // Prepare
    const tables = await freshTables(client);
    await putItems(client, tables.inventory, stock(3));
    const bad = deliveryFile('bad.csv', 3, (pet) => (pet === 2 ? '2,3,arrived,' : pet === 3 ? '1,3,,' : undefined));
    const good = deliveryFile('good.csv', 3);
    // Act
    const refused = await cli(tables, ['inventory', 'apply', bad]);
    const dryRun = await cli(tables, ['inventory', 'apply', good, '--dry-run']);
    // Assess
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `${bad}:3: reason must be one of received, returned, sold, correction, loss, other; got "arrived"\n` +
        `${bad}:4: petId 1 is already on line 2\n` +
        `error: 2 bad rows in ${bad}; nothing was applied\n`,
    );
    expect(dryRun).toEqual({
      code: 0,
      stdout: `Dry run: 3 valid changes in ${good} (1 batch of up to 100); nothing was applied.\n`,
      stderr: '',
    });
    expect([...(await entries(tables)).values()].map((entry) => entry.quantity)).toEqual([10, 10, 10]);
  });
});
