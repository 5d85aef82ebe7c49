import { Metrics } from '@aws-lambda-powertools/metrics';
import { jest } from '@jest/globals';
import { generateApiKey } from '../../functions/api-keys/key';
import { createHandler as createAuthorizer } from '../../functions/handlers/authorizer';
import { createHandler as createList } from '../../functions/handlers/list-inventory';
import { StorageUnavailableError } from '../../functions/inventory/errors';
import { invokeStreamingHandler } from '../../local/lambda/streaming';
import { LIST_NEAR_TIMEOUT_SHARE, METRIC_NAMES } from '../../service/metric-names';
import {
  aFeedAt,
  aLambdaContext,
  anApiGatewayEvent,
  anInventoryItem,
  InMemoryApiKeyRepository,
  InMemoryInventoryRepository,
} from '../fixtures/builders';
import { callStreaming, listHeldAfterFirstBatch } from '../helpers/streaming';

/** An EMF record as Powertools writes it: the dimension sets of its metrics, and their values. */
type EmfRecord = {
  _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[] };
  [key: string]: unknown;
};

/**
 * Every EMF record any Metrics instance publishes (the metrics are disabled in tests, so none is printed): what a
 * deployed function would write to its log, which CloudWatch turns into metrics.
 */
function captureRecords(): EmfRecord[] {
  const records: EmfRecord[] = [];
  const publish = Metrics.prototype.publishStoredMetrics;
  beforeEach(() => {
    records.length = 0;
    jest.spyOn(Metrics.prototype, 'publishStoredMetrics').mockImplementation(function (this: Metrics) {
      if (this.hasStoredMetrics()) records.push(this.serializeMetrics() as unknown as EmfRecord);
      return publish.call(this);
    });
  });
  afterEach(() => jest.restoreAllMocks());
  return records;
}

const metricsOf = (record: EmfRecord) => record._aws.CloudWatchMetrics.flatMap((m) => m.Metrics.map((x) => x.Name));
const dimensionSetsOf = (record: EmfRecord) => record._aws.CloudWatchMetrics.flatMap((m) => m.Dimensions);

describe('Function: authorizer, the per-version signal its deploy is gated on', () => {
  const records = captureRecords();
  const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/GET/inventory';
  const env = process.env.AWS_LAMBDA_FUNCTION_VERSION;
  beforeEach(() => {
    process.env.AWS_LAMBDA_FUNCTION_VERSION = '42';
  });
  afterEach(() => {
    if (env === undefined) delete process.env.AWS_LAMBDA_FUNCTION_VERSION;
    else process.env.AWS_LAMBDA_FUNCTION_VERSION = env;
  });
  const authorize = (keys: InMemoryApiKeyRepository, token: string) =>
    createAuthorizer({ keys })({ type: 'TOKEN', authorizationToken: token, methodArn }, aLambdaContext()).catch(
      () => undefined,
    );

  it('counts a key it could not check under its version, and under the stage-wide dimensions as before', async () => {
    // Prepare
    const keys = new InMemoryApiKeyRepository();
    keys.failWith = new StorageUnavailableError('down');

    // Act
    await authorize(keys, `Bearer ${generateApiKey('x').key}`);

    // Assess: two records of AuthorizerUnavailable, one with the default dimensions alone, one with the version too.
    const unavailable = records.filter((record) => metricsOf(record).includes(METRIC_NAMES.authorizerUnavailable));
    expect(unavailable.map(dimensionSetsOf)).toEqual(expect.arrayContaining([[['service']], [['service', 'version']]]));
    expect(unavailable).toHaveLength(2);
    expect(unavailable.find((record) => record.version !== undefined)).toMatchObject({ version: '42' });
  });

  it('sends nothing under its version for a refused key', async () => {
    // Act
    await authorize(new InMemoryApiKeyRepository(), 'Bearer nope');

    // Assess
    expect(records.flatMap(dimensionSetsOf).flat()).not.toContain('version');
    expect(records.flatMap(metricsOf)).toEqual([METRIC_NAMES.apiKeyRefused]);
  });
});

/**
 * Lambda sends a list's Duration and Errors only when it ends, so the list itself counts InventoryListNearTimeout
 * the moment it passes its share of its timeout (the clock is Jest's: only setTimeout and clearTimeout are faked).
 */
describe('Function: listInventory, a list near its time-out', () => {
  const records = captureRecords();
  const REMAINING_MS = 600_000;
  const budgetMs = REMAINING_MS * LIST_NEAR_TIMEOUT_SHARE;
  const context = () => ({ ...aLambdaContext(), getRemainingTimeInMillis: () => REMAINING_MS });
  const nearTimeout = () =>
    records.filter((record) => metricsOf(record).includes(METRIC_NAMES.inventoryListNearTimeout));
  beforeEach(() => {
    jest.useFakeTimers({
      doNotFake: ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate'],
    });
  });
  afterEach(() => jest.useRealTimers());

  it('sends InventoryListNearTimeout at once, while the list still runs, when its budget share is gone', async () => {
    // Prepare: a list whose second batch comes only when the test lets it.
    const { repository, release } = listHeldAfterFirstBatch();
    const { response, completion } = invokeStreamingHandler(
      createList({ feed: aFeedAt(), repository }),
      anApiGatewayEvent({ httpMethod: 'GET', body: null }),
      context(),
    );
    const { body } = await response;
    body.resume();

    // Act
    jest.advanceTimersByTime(budgetMs - 1);
    const before = nearTimeout().length;
    jest.advanceTimersByTime(1);

    // Assess: published on its own, before the list ends.
    expect(before).toBe(0);
    expect(nearTimeout()).toHaveLength(1);
    expect(metricsOf(nearTimeout()[0] as EmfRecord)).toEqual([METRIC_NAMES.inventoryListNearTimeout]);
    release();
    await completion;
  });

  it.each([
    ['a whole list', null],
    ['a page', { limit: '1' }],
  ])('sends nothing for %s that ended before its budget share', async (_, query) => {
    // Act
    const outcome = await callStreaming(
      createList({ feed: aFeedAt(), repository: new InMemoryInventoryRepository([anInventoryItem()]) }),
      anApiGatewayEvent({
        httpMethod: 'GET',
        body: null,
        queryStringParameters: query,
        multiValueQueryStringParameters: query && { limit: [query.limit] },
      }),
      context(),
    );
    jest.advanceTimersByTime(REMAINING_MS);

    // Assess
    expect(outcome.statusCode).toBe(200);
    expect(nearTimeout()).toEqual([]);
  });
});
