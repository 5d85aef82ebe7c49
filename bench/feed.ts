/**
 * The change feed as a client meets it through `npm start`: from sending a PATCH until the change shows on
 * `GET /v1/inventory/changes` (polled back to back from the list's `rel="changes"` position), and until the first
 * webhook attempt reaches a receiver on 127.0.0.1 (`PETSTORE_WEBHOOK_URL`).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { text } from 'node:stream/consumers';
import { type Api, call, send } from './http';
import { percentiles, type Section } from './measure';

/** How long a change may take to show on the feed or reach the receiver before the bench calls it not delivered. */
const BOUND_MS = 10_000;
const PET = '1';
/** A body naming the pet, its id written as a number or a string. */
const NAMES_PET = new RegExp(`"petId":"?${PET}\\b`);
const [VISIBLE, WEBHOOK] = ['write → visible on GET /v1/inventory/changes', 'write → first webhook attempt'];

type StartApi = (env: Record<string, string>) => Promise<Api & { stop(): Promise<unknown> }>;
type Delivery = { at: number; body: string };

const link = (header: unknown, rel: string, base: string) => {
  const found = new RegExp(`<([^>]+)>\\s*;\\s*rel="${rel}"`).exec(String(header ?? ''));
  return found?.[1] === undefined ? undefined : new URL(found[1], base).href;
};

/** `iterations` writes of one pet, each followed until it is visible on the feed and its webhook has arrived. */
export async function measureFeed(startApi: StartApi, iterations: number): Promise<Section> {
  const deliveries: Delivery[] = [];
  const receiver = createServer(async (req, res) => {
    const at = performance.now();
    deliveries.push({ at, body: await text(req) });
    res.end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as { port: number };
  const webhook = { PETSTORE_WEBHOOK_URL: `http://127.0.0.1:${port}/webhook` };
  const secret = { PETSTORE_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}` };
  // The last phase of a run: a refused configuration is reported, not allowed to lose the figures before it.
  const api = await startApi({ ...webhook, ...secret }).catch((error) => {
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

/** Reads the feed from `cursor` back to back until a change of the pet shows; the position after it. */
async function untilVisible(api: Api, cursor: string, started: number): Promise<string> {
  for (;;) {
    if (performance.now() - started > BOUND_MS) throw new Error(`no change on the feed within ${BOUND_MS} ms`);
    const page = await send(api, 'GET', cursor);
    cursor = link(page.headers.link, 'next', cursor) ?? cursor;
    if ((JSON.parse(page.text).items as { petId: unknown }[]).some((item) => String(item.petId) === PET)) return cursor;
  }
}

/** When the first webhook attempt naming the pet arrived after `started`, or undefined past the bound. */
async function firstDelivery(deliveries: readonly Delivery[], started: number) {
  for (;;) {
    const delivery = deliveries.find((d) => d.at > started && NAMES_PET.test(d.body));
    if (delivery || performance.now() - started > BOUND_MS) return delivery?.at;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function followWrites(api: Api, iterations: number, deliveries: readonly Delivery[]): Promise<Section> {
  const note = `${iterations} writes of one pet, one at a time.`;
  let cursor = link((await send(api, 'GET', '/inventory')).headers.link, 'changes', api.baseUrl);
  const probe = cursor && (await call(cursor, 'GET', { Authorization: `Bearer ${api.apiKey}` })).status;
  if (!cursor || probe === 404 || probe === 405) {
    const why = cursor ? `GET /v1/inventory/changes answered ${probe}` : 'GET /v1/inventory has no rel="changes" link';
    return { note: `feed not available: ${why}` };
  }
  const [visible, webhooks]: [number[], number[]] = [[], []];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    await send(api, 'PATCH', `/inventory/${PET}`, { quantity: i % 2 });
    cursor = await untilVisible(api, cursor, started);
    visible.push(performance.now() - started);
    const delivered = webhooks.length === i ? await firstDelivery(deliveries, started) : undefined;
    if (delivered !== undefined) webhooks.push(delivered - started);
  }
  const rows = [percentiles(VISIBLE, visible)];
  if (webhooks.length > 0) rows.push(percentiles(WEBHOOK, webhooks));
  const missing = `webhook not available: no attempt reached the receiver within ${BOUND_MS} ms`;
  const all = webhooks.length === iterations;
  return { note: all ? note : `${note} ${missing}`, columns: ['path', 'p50 ms', 'p99 ms'], rows };
}
