import { run } from '../../cli/run';
import { generateApiKey } from '../../functions/api-keys/key';
import { CHECKS } from '../../functions/self-check/checks';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { snapshotTable, startTestStack, type TestStack } from '../helpers/local-stack';

describe('CLI: smoke, against the real local gateway', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack.close());

  it('passes every check of a write key against a working API, and leaves the stock as it was', async () => {
    // Prepare
    const io = aCapturedIo();
    const before = await snapshotTable(stack.client, stack.tables.inventory);
    // Act
    const code = await run(['smoke', '--url', stack.url, '--key', stack.key], io);
    // Assess: the deploy checks but the read key's, which need a key of their own.
    expect(code).toBe(0);
    const ofWriteKey = CHECKS.filter(({ request }) => request.key !== 'read');
    expect(io.stdout.text).toBe(
      `${ofWriteKey.map(({ name }) => `ok   ${name}`).join('\n')}\n${ofWriteKey.length} passed, 0 failed\n`,
    );
    expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
  });

  it('fails with exit code 1 and names the failing checks when the key is refused', async () => {
    const io = aCapturedIo();
    const code = await run(
      ['smoke', '--url', stack.url, '--key', 'psk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
      io,
    );
    expect(code).toBe(1);
    expect(io.stdout.text).toMatch(/^FAIL GET \/inventory\?limit=1 with a write key answers 200.*status 401/m);
    expect(io.stdout.text).toMatch(/^ok {3}GET \/inventory without a key answers 401/m);
    expect(io.stderr.text).toMatch(/^error: \d+ of 11 smoke checks failed against http:\/\/127\.0\.0\.1:\d+\/v1$/m);
  });

  it('fails naming the cause when the key is a read key: the writes are 403, and smoke needs a write key', async () => {
    // Prepare
    const { key, record } = generateApiKey('smoke-read', new Date(), 'read');
    await new ApiKeyTable({ client: stack.client, tableName: stack.tables.apiKeys }).create(record);
    const io = aCapturedIo();
    // Act
    const code = await run(['smoke', '--url', stack.url, '--key', key], io);
    // Assess: the reads pass; what a read key may not do is named as such.
    expect(code).toBe(1);
    expect(io.stdout.text).toMatch(/^ok {3}GET \/inventory\?limit=1 with a write key answers 200/m);
    expect(io.stdout.text).toMatch(/^FAIL PATCH .*status 403/m);
    expect(io.stderr.text).toMatch(/403 ACCESS_DENIED, which is what a read key gets .*: smoke needs a write key/);
  });

  it('fails when nothing answers, without hanging', async () => {
    const io = aCapturedIo();
    const code = await run(['smoke', '--url', 'http://127.0.0.1:9/v1', '--key', stack.key], io);
    expect(code).toBe(1);
    expect(io.stdout.text).toMatch(/^0 passed, 11 failed$/m);
  });

  it('refuses a plain-HTTP --url to another machine (the key would cross the network in clear), exit code 2', async () => {
    const io = aCapturedIo();
    expect(await run(['smoke', '--url', 'http://inventory.example.com/v1', '--key', stack.key], io)).toBe(2);
    expect(io.stderr.text).toMatch(/--url must be https:\/\/ \(the API key would cross the network in clear\)/);
    // This machine is exempt: npm start serves plain HTTP on loopback.
    const local = aCapturedIo();
    expect(await run(['smoke', '--url', stack.url, '--key', stack.key], local)).toBe(0);
  });

  it('needs a key (exit code 2)', async () => {
    const io = aCapturedIo();
    expect(await run(['smoke', '--url', stack.url], io)).toBe(2);
    expect(io.stderr.text).toMatch(/smoke needs --key KEY/);
  });
});
