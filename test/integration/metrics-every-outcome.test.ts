import { logger } from '../../functions/observability/logger';
import { metrics } from '../../functions/observability/metrics';
import { call, jsonHeaders } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/local-stack';

/**
 * Powertools Metrics warns "No application metrics to publish" for every invocation that added none (its
 * `publishStoredMetrics`, which the handlers' logMetrics middleware calls after each one): in a deployed function
 * that is a log line per such request. Every answer of every route therefore counts itself in a metric, and the
 * utility's own warnings go through the structured logger (functions/observability/metrics.ts), which this test
 * listens to.
 */
let stack: TestStack;
const warnings: string[] = [];
const added: string[] = [];
const warn = logger.warn.bind(logger);
const addMetric = metrics.addMetric.bind(metrics);

beforeAll(async () => {
  stack = await startTestStack();
  logger.warn = ((message: string, ...rest: unknown[]) => {
    warnings.push(String(message));
    return warn(message, ...(rest as []));
  }) as typeof logger.warn;
  metrics.addMetric = ((name: string, ...rest: unknown[]) => {
    added.push(name);
    return addMetric(name, ...(rest as [never, never]));
  }) as typeof metrics.addMetric;
});
afterAll(async () => {
  logger.warn = warn;
  metrics.addMetric = addMetric;
  await stack?.close();
});

beforeEach(() => {
  warnings.length = 0;
  added.length = 0;
});

describe("Functions: every answer is counted in a metric, so none logs Powertools' empty-metrics warning", () => {
  const patch = (petId: string, body: unknown, extra: Record<string, string> = {}) =>
    call(stack.url, 'PATCH', `/inventory/${petId}`, {
      headers: { ...jsonHeaders(stack.authHeader), ...extra },
      body: JSON.stringify(body),
      route: '/inventory/{petId}',
    });

  const get = (path: string, route: string) => () => call(stack.url, 'GET', path, { headers: stack.authHeader, route });
  const rows: [string, string, () => Promise<unknown>][] = [
    ['a read of one entry (200)', 'InventoryEntryRead', get('/inventory/1', '/inventory/{petId}')],
    ['a read of an absent entry (404)', 'ClientError', get('/inventory/404404', '/inventory/{petId}')],
    // The whole list's size (InventoryEntriesListed) comes at the end of its stream, after the invocation's flush.
    ['the whole list (200)', 'InventoryListStreamStarted', get('/inventory', '/inventory')],
    ['a page of the list (200)', 'InventoryEntriesListed', get('/inventory?limit=1', '/inventory')],
    [
      "a page of a pet's history (200)",
      'InventoryHistoryListed',
      get('/inventory/1/history', '/inventory/{petId}/history'),
    ],
    [
      'the history of an absent entry (404)',
      'ClientError',
      get('/inventory/404404/history', '/inventory/{petId}/history'),
    ],
    ['the deprecated GET /pets/{petId} (501)', 'DeprecatedRouteCalled', get('/pets/1', '/pets/{petId}')],
    ['GET /store/orders (501)', 'UnimplementedRouteCalled', get('/store/orders', '/store/orders')],
    ['an update (200)', 'InventoryUpdated', () => patch('1', { adjustBy: 1 })],
    ['an update refused (409)', 'ClientError', () => patch('1', { quantity: 1, expectedQuantity: 999 })],
    [
      'a keyed update refused (404)',
      'ClientError',
      () => patch('404404', { adjustBy: 1 }, { 'Idempotency-Key': 'metrics-404' }),
    ],
  ];

  it.each(rows)('%s counts %s and logs no empty-metrics warning', async (_what, metric, send) => {
    // Act
    await send();
    // Assess
    expect(added).toContain(metric);
    expect(warnings.filter((line) => line.includes('No application metrics'))).toEqual([]);
  });

  it('a replayed keyed update counts IdempotentReplayed and logs no empty-metrics warning', async () => {
    // Prepare
    await patch('2', { adjustBy: 1 }, { 'Idempotency-Key': 'metrics-replay' });
    added.length = 0;
    // Act
    const replay = await patch('2', { adjustBy: 1 }, { 'Idempotency-Key': 'metrics-replay' });
    // Assess
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(added).toEqual(['IdempotentReplayed']);
    expect(warnings.filter((line) => line.includes('No application metrics'))).toEqual([]);
  });
});
