import { startTestStack, type TestStack } from '../helpers/local-stack';
import { runProcess } from '../helpers/process';

/**
 * `npm run bench:stage` is for a deployed stage, which this machine has none of: here it runs against the local
 * gateway `npm start` serves (in this process, over the test DynamoDB Local), the same API over HTTP, to show it
 * measures, prints its verdicts and leaves the pet's stock as it found it.
 */
describe('Benchmark: npm run bench:stage against a running API', () => {
  let api: TestStack;

  beforeAll(async () => {
    api = await startTestStack({
      inventory: [{ petId: '9223372036854775807', quantity: 2147483647, status: 'available' }],
    });
  });

  afterAll(async () => {
    await api?.close();
  });

  const benchStage = (args: string[], apiKey?: string) => {
    const { PETSTORE_API_KEY: _none, ...env } = process.env;
    // The script `npm run bench:stage` runs (tsx bench/stage-main.ts), without npm and tsx's wrapper process.
    return runProcess(process.execPath, ['--import', 'tsx', 'bench/stage-main.ts', ...args], {
      env: {
        ...env,
        ...(apiKey === undefined ? {} : { PETSTORE_API_KEY: apiKey }),
      },
    });
  };

  it('prints p50/p99 of the PATCH scenarios that only call the API, their ratios, and their verdicts', async () => {
    // Act: a pet at the top of the stock range, so the adjustments go down first and come back.
    // The key comes from PETSTORE_API_KEY, as docs/deploying.md runs it (a --key would show in ps).
    const run = await benchStage(['--url', api.url, '--pet', '9223372036854775807', '--iterations', '5'], api.key);
    // Assess
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toContain(`## PATCH /inventory/{petId} on ${api.url}\n\n5 of each, alternating.`);
    for (const row of ['PATCH quantity', 'PATCH quantity, with expectedQuantity', 'PATCH adjustBy'])
      expect(run.stdout).toMatch(new RegExp(`\\| ${row} \\| [\\d.]+ \\| [\\d.]+ \\|`));
    expect(run.stdout).toMatch(/\| PATCH adjustBy \+ Idempotency-Key \| [\d.]+ \| [\d.]+ \|/);
    expect(run.stdout).toMatch(/\| adjustBy \+ Idempotency-Key \/ plain \(no target\) \| [\d.]+x \| [\d.]+x \|/);
    expect(run.stdout).toMatch(/\| PATCH p50: adjustBy \/ plain PATCH \| [\d.]+ \| 1\.05 \| (yes|NO) \|/);
    expect(run.stdout).toMatch(/\| PATCH p50: with expectedQuantity \/ without \| [\d.]+ \| 1\.05 \| (yes|NO) \|/);
    // What only `npm run bench` can measure (DynamoDB Local reached directly) is neither run nor held to a target.
    expect(run.stdout).not.toContain('raw UpdateItem');
    expect(run.stdout).not.toContain('Idempotency-Key / plain PATCH');
    const entry = await fetch(`${api.url}/inventory/9223372036854775807`, { headers: api.authHeader });
    expect(await entry.text()).toBe('{"petId":9223372036854775807,"quantity":2147483647,"status":"available"}');
  });

  it('exits 1 naming the answer, and creates no entry, for a pet without one', async () => {
    const run = await benchStage(['--url', api.url, '--key', api.key, '--pet', '404404', '--iterations', '5']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('GET /inventory/404404 answered 404');
    const entry = await fetch(`${api.url}/inventory/404404`, { headers: api.authHeader });
    expect(entry.status).toBe(404);
  });

  it('exits 2 with its usage, naming PETSTORE_API_KEY, when no key is given', async () => {
    const run = await benchStage(['--url', api.url, '--pet', '1']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no write key: set PETSTORE_API_KEY');
    expect(run.stderr).toContain('usage: PETSTORE_API_KEY=<write key> npm run bench:stage');
  });

  it('refuses to send the key over plain HTTP to another machine', async () => {
    const run = await benchStage(['--url', 'http://inventory.example.com/v1', '--pet', '1'], api.key);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--url must be https:// (the API key would cross the network in clear)');
  });
});
