import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { run } from '../../cli/run';
import {
  type ChangeEvent,
  createInventoryClient,
  type InventoryClient,
  inventoryChangePages,
  listChangesCursor,
} from '../../client/index';
import { encodeFeedCursor } from '../../functions/inventory/feed-query';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { startTestStack, type TestStack } from '../helpers/local-stack';
import { ROOT } from '../helpers/process';
import { until } from '../helpers/until';

const MAX = 9223372036854775807n;
const MIN = -9223372036854775808n;
/** A cursor older than the history keeps (90 days). */
const EXPIRED = encodeFeedCursor({ sequence: 1, at: Date.now() - 91 * 86_400_000 });

/** Every event of the pages `pages` yields, until one ends it, with the cursor each page gave. */
async function readAll(pages: AsyncGenerator<{ events: ChangeEvent[]; cursor: string }>) {
  const events: ChangeEvent[] = [];
  const cursors: string[] = [];
  for await (const page of pages) {
    events.push(...page.events);
    cursors.push(page.cursor);
  }
  return { events, cursors };
}

// The feed is the real route over the rows the history function writes from the inventory table's stream.
describe('Change feed: the typed client and `inventory changes` through the local gateway', () => {
  let stack: TestStack;
  let client: InventoryClient;

  beforeAll(async () => {
    stack = await startTestStack({
      history: true,
      inventory: [
        { petId: String(MAX), quantity: 3, status: 'available' },
        { petId: String(MIN), quantity: 0, status: 'pending' },
        { petId: '7', quantity: 1, status: 'available' },
      ],
    });
    client = createInventoryClient({ baseUrl: stack.url, apiKey: stack.key });
    // Each test reads from where the list says the feed stands: the stock's creations must be in it first.
    await until(async () => (await readAll(inventoryChangePages(client))).events.length === 3);
  }, 60_000);
  afterAll(() => stack?.close());

  /**
   * Where the feed stands now, as a new consumer learns it: from the list's rel="changes" link (a position a few
   * seconds back, docs/api.md), read to the first empty page.
   */
  const startHere = async () => {
    const listed = listChangesCursor((await client.GET('/inventory')).response.headers.get('link'));
    return (await readAll(inventoryChangePages(client, { cursor: listed }))).cursors.at(-1);
  };
  const adjust = async (petId: bigint, adjustBy: number) => {
    const { response } = await client.PATCH('/inventory/{petId}', {
      params: { path: { petId } },
      body: { adjustBy, reason: 'received', reference: `delivery ${adjustBy}` },
    });
    expect(response.status).toBe(200);
  };
  /** The events after `cursor`, once `count` of them are in the feed. */
  const eventsAfter = async (cursor: string | undefined, count: number) => {
    let events: ChangeEvent[] = [];
    await until(async () => {
      events = (await readAll(inventoryChangePages(client, { cursor }))).events;
      return events.length >= count;
    });
    return events;
  };
  const cli = async (argv: string[]) => {
    const io = aCapturedIo({ env: { PETSTORE_API_KEY: stack.key } });
    const code = await run(['inventory', 'changes', '--url', stack.url, ...argv], io);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };

  it('reads the feed page by page, oldest first, with exact int64 petIds, and ends at the first empty page', async () => {
    // Prepare
    const start = await startHere();
    await adjust(MAX, 1);
    await adjust(7n, 2);
    await adjust(MAX, 3);
    await eventsAfter(start, 3);
    // Act
    const { events, cursors } = await readAll(inventoryChangePages(client, { cursor: start, limit: 2 }));
    // Assess
    expect(events.map((event) => [event.petId, event.adjustBy])).toEqual([
      [MAX, 1],
      [7n, 2],
      [MAX, 3],
    ]);
    expect(cursors).toHaveLength(3);
    expect(cursors[2]).toBe(cursors[1]);
  });

  it("resumes from a page's saved cursor with the events after that page, none of it again", async () => {
    // Prepare
    const start = await startHere();
    for (let adjustBy = 1; adjustBy <= 5; adjustBy++) await adjust(7n, adjustBy);
    await eventsAfter(start, 5);
    const read = await inventoryChangePages(client, { cursor: start, limit: 3 }).next();
    if (read.done) throw new Error('the feed gave no page');
    // Act
    const { events } = await readAll(inventoryChangePages(client, { cursor: read.value.cursor }));
    // Assess
    expect(read.value.events.map((event) => event.adjustBy)).toEqual([1, 2, 3]);
    expect(events.map((event) => event.adjustBy)).toEqual([4, 5]);
  });

  it('follows: after an empty page it asks again, yields what was added meanwhile, and ends when aborted', async () => {
    // Prepare
    const stop = new AbortController();
    const pages = inventoryChangePages(client, {
      cursor: await startHere(),
      follow: true,
      pollIntervalMs: 20,
      signal: stop.signal,
    });
    const seen: ChangeEvent[] = [];
    let empty = 0;
    // Act
    for await (const page of pages) {
      seen.push(...page.events);
      if (page.events.length === 0 && ++empty === 1) await adjust(MIN, 4);
      if (seen.length === 1) stop.abort();
    }
    // Assess
    expect(seen.map((event) => [event.petId, event.quantity])).toEqual([[MIN, 4]]);
  });

  it('rejects 410 CURSOR_EXPIRED with the Error body and the cursor it was asked with', async () => {
    await expect(readAll(inventoryChangePages(client, { cursor: EXPIRED }))).rejects.toMatchObject({
      status: 410,
      error: { code: 'CURSOR_EXPIRED' },
      cursor: EXPIRED,
    });
  });

  it('`inventory changes --format json` prints one exact JSON event a line and the cursor to resume from on stderr', async () => {
    // Prepare
    const start = await startHere();
    await adjust(MAX, 1);
    await adjust(MIN, 1);
    await eventsAfter(start, 2);
    const resume = (await readAll(inventoryChangePages(client, { cursor: start }))).cursors.at(-1);
    // Act
    const outcome = await cli(['--format', 'json', '--limit', '1', '--cursor', String(start)]);
    // Assess
    expect(outcome.code).toBe(0);
    const lines = outcome.stdout.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\{"id":"\d+","petId":9223372036854775807,"version":\d+,/);
    expect(lines[1]).toMatch(/^\{"id":"\d+","petId":-9223372036854775808,"version":\d+,/);
    expect(outcome.stderr).toBe(`2 changes from ${stack.url}/inventory/changes; resume with --cursor ${resume}\n`);
  });

  it.each([
    [['--since', '2026-12-01'], /^error: inventory changes does not take --since /],
    [['--limit', '1001'], /^error: --limit must be an integer from 1 to 1000; got "1001" /],
  ])('`inventory changes %j` is refused with a usage line, exit 2', async (argv, line) => {
    const outcome = await cli(argv);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(line);
  });

  it('`inventory changes` with an expired cursor exits 1 with the Error answer on one line', async () => {
    const outcome = await cli(['--cursor', EXPIRED]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(
      new RegExp(
        `^error: GET ${stack.url}/inventory/changes answered 410 CURSOR_EXPIRED: .*; resume with --cursor ${EXPIRED}\n$`,
      ),
    );
  });

  it('`npm run cli -- inventory changes --follow` prints each change as a text line, and SIGINT ends it with exit 0 and the cursor', async () => {
    // Prepare
    const start = String(await startHere());
    await adjust(MAX, 1);
    await eventsAfter(start, 1);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'cli/main.ts', 'inventory', 'changes', '--follow', '--url', stack.url, '--cursor', start],
      { cwd: ROOT, env: { ...process.env, PETSTORE_API_KEY: stack.key }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = once(child, 'close');
    await until(() => stdout.includes('\n'));
    // Act
    child.kill('SIGINT');
    const [code] = await exited;
    // Assess
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^\S+Z {2}\d+ {2}petId 9223372036854775807 {2}v\d+ {2}\d+ -> \d+ \(\+1\) {2}available -> available {2}received {2}api {2}key_\w+ {2}delivery 1\n$/,
    );
    expect(stderr.trimEnd().split('\n').at(-1)).toMatch(
      new RegExp(`^1 change from ${stack.url}/inventory/changes; resume with --cursor [A-Za-z0-9_-]+$`),
    );
  }, 30_000);
});
