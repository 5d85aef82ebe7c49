import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { run } from '../../cli/run';
import {
  type ChangeEvent,
  createInventoryClient,
  type InventoryClient,
  inventoryChangePages,
  listChangesCursor,
} from '../../client/index';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { type LoopbackServer, serveOnLoopback } from '../helpers/loopback-server';
import { ROOT } from '../helpers/process';

const KEY = 'psk_feed-test-key';

/** An event's JSON as the feed writes it: petId an int64 with every digit. */
function eventJson(position: number, petId: string, quantity: number): string {
  return JSON.stringify({
    id: String(position + 1),
    petId: 0,
    version: position + 1,
    at: new Date(Date.UTC(2026, 11, 6, 9, 0, position)).toISOString(),
    source: 'api',
    actor: 'key_0123456789abcdef',
    requestId: null,
    quantity,
    previousQuantity: position === 0 ? null : quantity - 1,
    adjustBy: 1,
    status: 'available',
    previousStatus: position === 0 ? null : 'available',
    reason: 'received',
    reference: position % 2 === 0 ? null : `delivery ${position}`,
  }).replace('"petId":0', `"petId":${petId}`);
}

/**
 * The feed as documented (docs/api.md, `GET /inventory/changes`): pages oldest first, cursor `p<position>`, always a
 * `rel="next"` link (on an empty page, where to ask again), 400 for a bad limit or cursor, 410 for `expired`, 401
 * without the key; and the list's `rel="changes"` link to the feed's position when it was read.
 */
function aFeed() {
  const events: string[] = [];
  const asked: URLSearchParams[] = [];
  const answer = (res: ServerResponse, status: number, body: string, link?: string) => {
    res.writeHead(status, { 'content-type': 'application/json', ...(link ? { link } : {}) });
    res.end(body);
  };
  const error = (res: ServerResponse, status: number, code: string) =>
    answer(res, status, JSON.stringify({ code, message: `${code} (test feed)`, status }));
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (req.headers.authorization !== `Bearer ${KEY}`) return error(res, 401, 'UNAUTHORIZED');
    const link = (position: number, rel: string) =>
      `<${url.origin}/v1/inventory/changes?cursor=p${position}>; rel="${rel}"`;
    if (url.pathname === '/v1/inventory') return answer(res, 200, '[]', link(events.length, 'changes'));
    asked.push(url.searchParams);
    const cursor = url.searchParams.get('cursor') ?? 'p0';
    const limit = Number(url.searchParams.get('limit') ?? 100);
    if (cursor === 'expired') return error(res, 410, 'CURSOR_EXPIRED');
    const position = /^p[0-9]+$/.test(cursor) ? Number(cursor.slice(1)) : Number.NaN;
    if (!(position <= events.length) || !(limit >= 1 && limit <= 1000)) return error(res, 400, 'VALIDATION_FAILED');
    const page = events.slice(position, position + limit);
    answer(res, 200, `{"items":[${page.join(',')}]}`, link(position + page.length, 'next'));
  };
  const add = (petId: string, quantity: number) => events.push(eventJson(events.length, petId, quantity));
  return { listener, add, asked };
}

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

describe('Change feed: the typed client and `inventory changes` against a server of the documented feed', () => {
  let feed: ReturnType<typeof aFeed>;
  let server: LoopbackServer;
  let client: InventoryClient;

  beforeEach(async () => {
    feed = aFeed();
    server = await serveOnLoopback(feed.listener);
    client = createInventoryClient({ baseUrl: `${server.url}/v1`, apiKey: KEY });
  });
  afterEach(async () => {
    await server.close();
  });

  const cli = async (argv: string[], interrupt?: AbortSignal) => {
    const io = aCapturedIo({ env: { PETSTORE_API_KEY: KEY } });
    if (interrupt) io.interruptSignal = () => interrupt;
    const code = await run(['inventory', 'changes', '--url', `${server.url}/v1`, ...argv], io);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };

  it('reads the feed page by page, oldest first, with exact int64 petIds, and ends at the first empty page', async () => {
    // Prepare
    feed.add('9223372036854775807', 3);
    feed.add('7', 1);
    feed.add('9223372036854775807', 4);
    // Act
    const { events, cursors } = await readAll(inventoryChangePages(client, { limit: 2 }));
    // Assess
    expect(events.map((event) => [event.id, event.petId, event.quantity])).toEqual([
      ['1', 9223372036854775807n, 3],
      ['2', 7n, 1],
      ['3', 9223372036854775807n, 4],
    ]);
    expect(cursors).toEqual(['p2', 'p3', 'p3']);
    expect(feed.asked.map((query) => query.toString())).toEqual(['limit=2', 'limit=2&cursor=p2', 'limit=2&cursor=p3']);
  });

  it("resumes from a page's saved cursor with the events after that page, none of it again", async () => {
    // Prepare
    for (let quantity = 1; quantity <= 5; quantity++) feed.add('1', quantity);
    const read = await inventoryChangePages(client, { limit: 3 }).next();
    if (read.done) throw new Error('the feed gave no page');
    const first = read.value;
    // Act
    const { events } = await readAll(inventoryChangePages(client, { cursor: first.cursor }));
    // Assess
    expect(first.events.map((event) => event.id)).toEqual(['1', '2', '3']);
    expect(events.map((event) => event.id)).toEqual(['4', '5']);
  });

  it('follows: after an empty page it asks again, yields what was added meanwhile, and ends when aborted', async () => {
    // Prepare
    feed.add('1', 1);
    const stop = new AbortController();
    const pages = inventoryChangePages(client, { follow: true, pollIntervalMs: 5, signal: stop.signal });
    const seen: string[] = [];
    // Act
    for await (const page of pages) {
      seen.push(...page.events.map((event) => event.id));
      if (page.events.length === 0 && seen.length === 1) feed.add('2', 1);
      if (seen.length === 2) stop.abort();
    }
    // Assess
    expect(seen).toEqual(['1', '2']);
  });

  it('starts a new consumer at the list\'s rel="changes" position: only the changes made after the list', async () => {
    // Prepare
    feed.add('1', 1);
    const listed = await client.GET('/inventory');
    feed.add('1', 2);
    // Act
    const cursor = listChangesCursor(listed.response.headers.get('link'));
    const { events } = await readAll(inventoryChangePages(client, { cursor }));
    // Assess
    expect(cursor).toBe('p1');
    expect(events.map((event) => event.id)).toEqual(['2']);
  });

  it('rejects 410 CURSOR_EXPIRED with the Error body and the cursor it was asked with', async () => {
    // Act
    const reading = readAll(inventoryChangePages(client, { cursor: 'expired' }));
    // Assess
    await expect(reading).rejects.toMatchObject({
      status: 410,
      error: { code: 'CURSOR_EXPIRED' },
      cursor: 'expired',
    });
  });

  it('`inventory changes --format json` prints one exact JSON event a line and the cursor to resume from on stderr', async () => {
    // Prepare
    feed.add('9223372036854775807', 3);
    feed.add('-9223372036854775808', 1);
    // Act
    const outcome = await cli(['--format', 'json', '--limit', '1']);
    // Assess
    expect(outcome.code).toBe(0);
    const lines = outcome.stdout.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(eventJson(0, '9223372036854775807', 3));
    expect(lines[1]).toBe(eventJson(1, '-9223372036854775808', 1));
    expect(outcome.stderr).toBe(`2 changes from ${server.url}/v1/inventory/changes; resume with --cursor p2\n`);
  });

  it('`inventory changes --follow` prints each change as it comes, one text line each, and ends on Ctrl-C with the cursor', async () => {
    // Prepare: the interrupt comes once the second change is printed.
    feed.add('9223372036854775807', 3);
    const interrupt = new AbortController();
    const following = cli(['--follow', '--cursor', 'p0'], interrupt.signal);
    await until(() => feed.asked.length >= 2);
    feed.add('7', 1);
    await until(() => feed.asked.some((query) => query.get('cursor') === 'p2'));
    // Act
    interrupt.abort();
    const outcome = await following;
    // Assess
    expect(outcome.code).toBe(0);
    expect(outcome.stdout.split('\n')).toEqual([
      '2026-12-06T09:00:00.000Z  1  petId 9223372036854775807  v1  - -> 3 (+1)  - -> available  received  api  key_0123456789abcdef',
      '2026-12-06T09:00:01.000Z  2  petId 7  v2  0 -> 1 (+1)  available -> available  received  api  key_0123456789abcdef  delivery 1',
      '',
    ]);
    expect(outcome.stderr.split('\n').at(-2)).toBe(
      `2 changes from ${server.url}/v1/inventory/changes; resume with --cursor p2`,
    );
  });

  it.each([
    [['--since', '2026-12-01'], /^error: inventory changes does not take --since /],
    [['--limit', '1001'], /^error: --limit must be an integer from 1 to 1000; got "1001" /],
  ])('`inventory changes %j` is refused with a usage line, exit 2, before calling the API', async (argv, line) => {
    // Act
    const outcome = await cli(argv);
    // Assess
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(line);
    expect(feed.asked).toHaveLength(0);
  });

  it('`inventory changes` with an expired cursor exits 1 with the Error answer on one line', async () => {
    // Act
    const outcome = await cli(['--cursor', 'expired']);
    // Assess
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe(
      `error: GET ${server.url}/v1/inventory/changes answered 410 CURSOR_EXPIRED: CURSOR_EXPIRED (test feed); resume with --cursor expired\n`,
    );
  });

  it('`npm run cli -- inventory changes --follow` as a process: SIGINT ends it with exit 0 and the cursor on stderr', async () => {
    // Prepare
    feed.add('1', 1);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'cli/main.ts', 'inventory', 'changes', '--follow', '--url', `${server.url}/v1`],
      { cwd: ROOT, env: { ...process.env, PETSTORE_API_KEY: KEY }, stdio: ['ignore', 'pipe', 'pipe'] },
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
    await until(() => stdout.includes('\n'), 20_000);
    // Act
    child.kill('SIGINT');
    const [code] = await exited;
    // Assess
    expect(code).toBe(0);
    expect(stdout.split('\n')).toHaveLength(2);
    expect(stderr.trimEnd().split('\n').at(-1)).toBe(
      `1 change from ${server.url}/v1/inventory/changes; resume with --cursor p1`,
    );
  }, 30_000);
});

/** Resolves once `condition` holds, checking every 5 ms; rejects after `limitMs` so a hang fails with a reason. */
async function until(condition: () => boolean, limitMs = 5000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition never held');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
