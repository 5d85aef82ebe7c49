/**
 * The change feed as a client meets it through `npm start`: from sending a PATCH until the change shows on
 * `GET /v1/inventory/changes` (polled back to back from the list's `rel="changes"` position), and until the first
 * webhook attempt reaches a receiver on 127.0.0.1 (`PETSTORE_WEBHOOK_URL`).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { call } from './http';
import { quantile, round, type Section } from './measure';

/** How long a change may take to show on the feed or reach the receiver before the bench calls it not delivered. */
const BOUND_MS = 10_000;
const PET = '1';
/** A body naming the pet, its id written as a number or a string. */
const NAMES_PET = new RegExp(`"petId":"?${PET}\\b`);

const ROWS: Record<string, string> = {
  visible: 'write → visible on GET /v1/inventory/changes',
  webhook: 'write → first webhook attempt',
};

/** What the feed needs of `npm start`: one started with the given environment, and stopped. */
type StartApi = (env: Record<string, string>) => Promise<{ baseUrl: string; apiKey: string; stop(): Promise<unknown> }>;

const link = (header: unknown, rel: string, base: string) => {
  const found = new RegExp(`<([^>]+)>\\s*;\\s*rel="${rel}"`).exec(String(header ?? ''));
  return found?.[1] === undefined ? undefined : new URL(found[1], base).href;
};

/** `iterations` writes of one pet, each followed until it is visible on the feed and its webhook has arrived. */
export async function measureFeed(startApi: StartApi, iterations: number): Promise<Section> {
  const deliveries: { at: number; body: string }[] = [];
  const receiver = createServer((req, res) => {
    const at = performance.now();
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      deliveries.push({ at, body: Buffer.concat(parts).toString() });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as { port: number };
  const webhook = `http://127.0.0.1:${port}/webhook`;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  // The last phase of a run: a refused configuration is reported, not allowed to lose the figures before it.
  const api = await startApi({ PETSTORE_WEBHOOK_URL: webhook, PETSTORE_WEBHOOK_SECRET: secret }).catch((error) => {
    receiver.close();
    return `feed not measured: ${String(error).trim().split('\n').at(-1)}`;
  });
  if (typeof api === 'string') return { note: api };
  try {
    return await followWrites(api, iterations, deliveries);
  } finally {
    await api.stop();
    receiver.close();
  }
}

type Headers = Record<string, string>;

/** Reads the feed from `cursor` back to back until a change of the pet shows; the position after it. */
async function untilVisible(cursor: string, headers: Headers, started: number): Promise<string> {
  for (;;) {
    if (performance.now() - started > BOUND_MS) throw new Error(`no change on the feed within ${BOUND_MS} ms`);
    const page = await call(cursor, 'GET', headers);
    if (page.status !== 200) throw new Error(`GET ${cursor} answered ${page.status}: ${page.text}`);
    const { items } = JSON.parse(page.text) as { items: { petId: unknown }[] };
    cursor = link(page.headers.link, 'next', cursor) ?? cursor;
    if (items.some((item) => String(item.petId) === PET)) return cursor;
  }
}

/** When the first webhook attempt naming the pet arrived after `started`, or undefined past the bound. */
async function firstDelivery(deliveries: readonly { at: number; body: string }[], started: number) {
  for (;;) {
    const delivery = deliveries.find((d) => d.at > started && NAMES_PET.test(d.body));
    if (delivery || performance.now() - started > BOUND_MS) return delivery?.at;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function followWrites(
  api: { baseUrl: string; apiKey: string },
  iterations: number,
  deliveries: readonly { at: number; body: string }[],
): Promise<Section> {
  const headers = { Authorization: `Bearer ${api.apiKey}`, 'Content-Type': 'application/json' };
  const samples: Record<string, number[]> = { visible: [], webhook: [] };
  const note = `${iterations} writes of one pet, one at a time.`;
  let cursor = link((await call(`${api.baseUrl}/inventory`, 'GET', headers)).headers.link, 'changes', api.baseUrl);
  const probe = cursor && (await call(cursor, 'GET', headers)).status;
  if (!cursor || probe === 404 || probe === 405) {
    const why = cursor ? `GET /v1/inventory/changes answered ${probe}` : 'GET /v1/inventory has no rel="changes" link';
    return { note: `feed not available: ${why}` };
  }
  let webhooks = true;
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    const write = await call(`${api.baseUrl}/inventory/${PET}`, 'PATCH', headers, `{"quantity":${i % 2}}`);
    if (write.status !== 200) throw new Error(`PATCH /inventory/${PET} answered ${write.status}`);
    cursor = await untilVisible(cursor, headers, started);
    samples.visible?.push(performance.now() - started);
    const delivered = webhooks ? await firstDelivery(deliveries, started) : undefined;
    if (delivered === undefined) webhooks = false;
    else samples.webhook?.push(delivered - started);
  }
  const rows = Object.entries(ROWS)
    .filter(([name]) => (samples[name]?.length ?? 0) > 0)
    .map(([name, row]) => [row, ...[0.5, 0.99].map((q) => round(quantile(samples[name] ?? [], q), 2))]);
  const missing = `webhook not available: no attempt reached the receiver within ${BOUND_MS} ms`;
  return { note: webhooks ? note : `${note} ${missing}`, columns: ['path', 'p50 ms', 'p99 ms'], rows };
}
