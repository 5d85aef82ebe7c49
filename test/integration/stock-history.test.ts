import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../cli/run';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { type LocalApiProcess, startLocalApiProcess } from '../helpers/api-process';
import { call, jsonHeaders } from '../helpers/http';

const READY_TIMEOUT_MS = 90_000;

interface HistoryRow {
  petId: number;
  at: string;
  previousQuantity: number | null;
  quantity: number;
  previousStatus: string | null;
  status: string;
  source: string;
  actor: string;
  requestId?: string | null;
  reason?: string | null;
  reference?: string | null;
}

/**
 * Two guarantees through `npm start`, as a client and an operator meet them: compare-and-set PATCH
 * loses no concurrent update, and every stock change (import or API) is on record in `inventory history`, fed by
 * the history function from DynamoDB Local's stream.
 */
describe('No lost updates, and every stock change on record (npm start)', () => {
  let api: LocalApiProcess;
  let dir: string;

  beforeAll(async () => {
    api = await startLocalApiProcess({
      env: { PETSTORE_RATE_LIMIT: '0', POWERTOOLS_LOG_LEVEL: 'SILENT' },
      readyTimeoutMs: READY_TIMEOUT_MS,
    });
    dir = mkdtempSync(join(tmpdir(), 'stock-history-'));
  }, READY_TIMEOUT_MS + 10_000);
  afterAll(async () => {
    await api?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const auth = () => ({ Authorization: `Bearer ${api.apiKey}` });
  const patch = (petId: string, body: string) =>
    call(api.baseUrl, 'PATCH', `/inventory/${petId}`, {
      headers: jsonHeaders(auth()),
      body,
      route: '/inventory/{petId}',
    });
  // What a client that must read its own write does: the strongly consistent read of one entry (the list is read
  // from an index, eventually consistent).
  const quantityOf = async (petId: string): Promise<number> => {
    const response = await call(api.baseUrl, 'GET', `/inventory/${petId}`, {
      headers: auth(),
      route: '/inventory/{petId}',
    });
    if (response.status !== 200)
      throw new Error(`GET /inventory/${petId} answered ${response.status}: ${response.text}`);
    return (response.json as { quantity: number }).quantity;
  };
  const cli = async (argv: string[]) => {
    const io = aCapturedIo({ env: { USER: 'ops-test' }, cwd: dir });
    const code = await run([...argv, '--endpoint', api.dynamoEndpoint], io);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };
  const history = async (petId: string): Promise<HistoryRow[]> => {
    const outcome = await cli(['inventory', 'history', petId, '--format', 'json']);
    if (outcome.code !== 0) throw new Error(outcome.stderr);
    return JSON.parse(outcome.stdout) as HistoryRow[];
  };
  const historyUntil = async (petId: string, done: (rows: HistoryRow[]) => boolean, timeoutMs = 25_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await history(petId);
      if (done(rows)) return rows;
      if (Date.now() > deadline) throw new Error(`history of ${petId} incomplete: ${JSON.stringify(rows)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('loses no increment when 16 read-modify-write clients use expectedQuantity on one pet at once', async () => {
    // Prepare: the demo inventory's pet 10 holds 25. The increments land one after another (each a GET and a PATCH
    // through npm start), so their number, not the clients', sets the time: two each.
    const start = await quantityOf('10');
    const clients = 16;
    const incrementsEach = 2;
    let conflicts = 0;
    const increment = async () => {
      for (;;) {
        const current = await quantityOf('10');
        const response = await patch('10', `{"quantity":${current + 1},"expectedQuantity":${current}}`);
        if (response.status === 200) return;
        if (response.status !== 409) throw new Error(`PATCH answered ${response.status}: ${response.text}`);
        conflicts++;
      }
    };
    // Act
    await Promise.all(
      Array.from({ length: clients }, async () => {
        for (let i = 0; i < incrementsEach; i++) await increment();
      }),
    );
    // Assess
    expect(await quantityOf('10')).toBe(start + clients * incrementsEach);
    // The clients really raced: some of their writes were refused and retried.
    expect(conflicts).toBeGreaterThan(0);
  }, 120_000);

  it('answers a stale expectedQuantity with 409 CONFLICT naming the current quantity, and changes nothing', async () => {
    // Prepare
    const current = await quantityOf('1');
    // Act
    const response = await patch('1', `{"quantity":${current + 10},"expectedQuantity":${current - 1}}`);
    // Assess
    expect(response.status).toBe(409);
    expect(response.json).toEqual({
      code: 'CONFLICT',
      message: `The stored quantity of petId 1 is ${current}, not the expected ${current - 1}; nothing was changed.`,
      status: 409,
    });
    expect(await quantityOf('1')).toBe(current);
  });

  it('lists every change after an import and several PATCHes oldest first, each from the quantity before it, and nothing refused', async () => {
    // Prepare: an import that creates pet 500, changes pet 4 (demo: 1) and rewrites pet 2 (demo: 3) unchanged.
    writeFileSync(join(dir, 'arrivals.csv'), 'petId,quantity,status\n500,5,available\n4,6,pending\n2,3,available\n');
    const imported = await cli(['inventory', 'import', 'arrivals.csv']);
    expect(imported.code).toBe(0);

    // Act: changes, and refused attempts between them.
    const changes = [await patch('500', '{"quantity":7}'), await patch('500', '{"quantity":9,"expectedQuantity":7}')];
    const refused = [
      await patch('500', '{"quantity":1,"expectedQuantity":7}'), // stale: 409
      await patch('500', '{"quantity":-1}'), // 400
      await patch('500', '{"quantity":2,"expectedQuantity":"9"}'), // 400
      await patch('501', '{"quantity":1}'), // no entry: 404
    ];
    changes.push(await patch('500', '{"quantity":8,"expectedQuantity":9}'));
    const rows = await historyUntil('500', (found) => found.length >= 4);

    // Assess
    expect(changes.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(refused.map((response) => response.status)).toEqual([409, 400, 400, 404]);
    expect(rows.map((row) => [row.previousQuantity, row.quantity])).toEqual([
      [null, 5],
      [5, 7],
      [7, 9],
      [9, 8],
    ]);
    for (let i = 1; i < rows.length; i++) expect(rows[i]?.previousQuantity).toBe(rows[i - 1]?.quantity);
    expect(rows.map((row) => row.source)).toEqual(['import', 'api', 'api', 'api']);
    expect(rows[0]?.actor).toMatch(/^import arrivals\.csv by ops-test@\S+ run [0-9a-f-]{36}$/);
    expect(rows[0]).not.toHaveProperty('requestId');
    for (const row of rows.slice(1)) {
      expect(row.actor).toMatch(/^key_[0-9a-f]+$/);
      expect(row.requestId).toMatch(/\S/);
    }
    expect(new Set(rows.slice(1).map((row) => row.requestId)).size).toBe(3);
    const times = rows.map((row) => row.at);
    expect([...times].sort()).toEqual(times);
    for (const at of times) expect(at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(await history('501')).toEqual([]);

    // The import's change of pet 4 is on record; its unchanged rewrite of pet 2 is not (only the demo seed is).
    const pet4 = await historyUntil('4', (found) => found.length >= 2);
    expect(pet4.map((row) => [row.previousQuantity, row.quantity, row.previousStatus, row.status])).toEqual([
      [null, 1, null, 'pending'],
      [1, 6, 'pending', 'pending'],
    ]);
    // A marker change written after the import: once it is on record, every earlier stream record has been read.
    expect((await patch('1', '{"quantity":13}')).status).toBe(200);
    await historyUntil('1', (found) => found.some((row) => row.quantity === 13));
    const pet2 = await history('2');
    expect(pet2.map((row) => [row.previousQuantity, row.quantity, row.actor])).toEqual([
      [null, 3, 'npm start demo inventory'],
    ]);
  }, 60_000);

  it('prints the history as a table, and only the changes since a time with --since', async () => {
    // Prepare: a pet of this test's own, created by an import and changed twice.
    writeFileSync(join(dir, 'pet-600.csv'), 'petId,quantity,status\n600,5,available\n');
    expect((await cli(['inventory', 'import', 'pet-600.csv'])).code).toBe(0);
    expect((await patch('600', '{"quantity":7}')).status).toBe(200);
    expect((await patch('600', '{"quantity":9}')).status).toBe(200);
    const rows = await historyUntil('600', (found) => found.length >= 3);
    const since = rows[2]?.at ?? '';
    // Act
    const table = await cli(['inventory', 'history', '600']);
    const recent = await cli(['inventory', 'history', '600', '--since', since, '--format', 'json']);
    // Assess
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^at\s+quantity\s+status\s+reason\s+source\s+actor\s+requestId\s+reference$/,
    );
    expect(table.stdout).toMatch(/- -> 5\s+- -> available\s+import/);
    expect(table.stderr).toMatch(/^3 changes of petId 600 in petstore-inventory-history \(DynamoDB at /);
    expect((JSON.parse(recent.stdout) as HistoryRow[]).map((row) => row.quantity)).toEqual(
      rows.filter((row) => row.at >= since).map((row) => row.quantity),
    );
  });
});
