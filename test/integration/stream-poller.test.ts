import { type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { createHandler as createHistoryFunction } from '../../functions/handlers/record-history';
import type { ChangeOrigin } from '../../functions/inventory/types';
import { HistoryTable } from '../../functions/store/history-table';
import { inventoryAttributes } from '../../functions/store/inventory-row';
import { InventoryTable } from '../../functions/store/inventory-table';
import { type StreamPoller, startStreamPoller } from '../../local/lambda/stream-poller';
import { tableStreamArn } from '../../local/tables';
import type { TableNames } from '../../service/local-dynamodb';
import { freshTables, testClient, testEndpoint } from '../helpers/local-stack';

const ORIGIN: ChangeOrigin = { source: 'api', actor: 'key_1', requestId: 'req-1', at: '2026-11-23T10:00:00.000Z' };

/** Polls until `condition` holds; the time limit only ends a run that would otherwise hang (the test's own timeout is 30 s). */
async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * The local stand-in for Lambda's event source mapping on a DynamoDB stream, against DynamoDB Local's stream. Each
 * behaviour follows the AWS Lambda Developer Guide, "Using AWS Lambda with Amazon DynamoDB" (event shape, polling,
 * error handling), except that a batch with a reported failure is retried whole, where "Configuring partial batch
 * response with DynamoDB and Lambda" resumes at the lowest failure: the history ends the same either way, since a
 * record's row is keyed by its sequence number (local/lambda/stream-poller.ts).
 */
describe('Local runner: the stream poller that stands in for the history event source mapping', () => {
  let client: DynamoDBClient;
  let tables: TableNames;
  let poller: StreamPoller | undefined;
  let events: DynamoDBStreamEvent[];

  const put = (petId: string, quantity: number) =>
    client.send(
      new PutItemCommand({
        TableName: tables.inventory,
        Item: inventoryAttributes({ petId, quantity, status: 'available' }),
      }),
    );
  const start = async (
    respond: (event: DynamoDBStreamEvent, call: number) => DynamoDBBatchResponse | undefined,
    options: {
      batchSize?: number;
      retryAttempts?: number;
      log?: (line: string) => void;
      pollIntervalMs?: number;
    } = {},
  ) => {
    poller = startStreamPoller({
      endpoint: testEndpoint(),
      streamArn: await tableStreamArn(client, tables.inventory),
      pollIntervalMs: 50,
      log: () => undefined,
      ...options,
      handler: async (event) => {
        events.push(event);
        return respond(event, events.length);
      },
    });
  };
  const sequences = (event: DynamoDBStreamEvent | undefined) =>
    (event?.Records ?? []).map((record) => record.dynamodb?.SequenceNumber);

  beforeAll(() => {
    client = testClient();
  });
  beforeEach(async () => {
    tables = await freshTables(client, { stream: true });
    events = [];
  });
  afterEach(async () => {
    await poller?.stop();
    poller = undefined;
  });
  afterAll(() => client.destroy());

  it('invokes the function with the DynamoDBStreamEvent Lambda sends: images, keys, sequence numbers, source ARN', async () => {
    // Prepare
    await put('9223372036854775807', 1);
    await put('9223372036854775807', 2);
    const streamArn = await tableStreamArn(client, tables.inventory);
    // Act
    await start(() => ({ batchItemFailures: [] }));
    await waitFor(() => events.flatMap((event) => event.Records).length >= 2);
    // Assess
    const [created, modified] = events.flatMap((event) => event.Records);
    expect(created).toMatchObject({
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      eventSourceARN: streamArn,
      dynamodb: {
        Keys: { petId: { N: '9223372036854775807' } },
        NewImage: { petId: { N: '9223372036854775807' }, quantity: { N: '1' }, status: { S: 'available' } },
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    });
    expect(created?.dynamodb).not.toHaveProperty('OldImage');
    expect(modified).toMatchObject({
      eventName: 'MODIFY',
      dynamodb: { OldImage: { quantity: { N: '1' } }, NewImage: { quantity: { N: '2' } } },
    });
    // Epoch seconds, as in the Lambda event (the Streams API returns a date).
    expect(Number.isInteger(created?.dynamodb?.ApproximateCreationDateTime)).toBe(true);
    expect(BigInt(modified?.dynamodb?.SequenceNumber ?? '0')).toBeGreaterThan(
      BigInt(created?.dynamodb?.SequenceNumber ?? '0'),
    );
  });

  it('retries a batch with a reported item failure whole, at the next poll', async () => {
    // Prepare
    for (const quantity of [1, 2, 3]) await put('1', quantity);
    // Act: the first call reports the second record as failed; the later calls succeed.
    await start((event, call) =>
      call === 1
        ? { batchItemFailures: [{ itemIdentifier: event.Records[1]?.dynamodb?.SequenceNumber ?? '' }] }
        : { batchItemFailures: [] },
    );
    await waitFor(() => events.length >= 2);
    // Assess
    expect(sequences(events[0])).toHaveLength(3);
    expect(sequences(events[1])).toEqual(sequences(events[0]));
  });

  it('stops at once while it sleeps between polls (a 30 s interval)', async () => {
    // Prepare
    await put('1', 1);
    await start(() => undefined, { pollIntervalMs: 30_000 });
    await waitFor(() => events.length === 1);
    // Act
    let guard: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      (poller as StreamPoller).stop().then(() => 'stopped'),
      new Promise((resolve) => {
        guard = setTimeout(resolve, 5000, 'still waiting after 5 s');
      }),
    ]);
    clearTimeout(guard);
    poller = undefined;
    // Assess
    expect(outcome).toBe('stopped');
  });

  it('runs the history function on the stream, so a change is in the history table', async () => {
    // Prepare
    await put('42', 12);
    const history = new HistoryTable({ client, tableName: tables.history });
    poller = startStreamPoller({
      endpoint: testEndpoint(),
      streamArn: await tableStreamArn(client, tables.inventory),
      handler: createHistoryFunction({ history }),
      log: () => undefined,
    });
    const inventory = new InventoryTable({ client, tableName: tables.inventory });
    // Act
    const changed = new Date().toISOString();
    await inventory.applyChange('42', { quantity: 13, expectedQuantity: 12 }, ORIGIN);
    await waitFor(async () => (await history.listFor('42')).length === 2);
    // Assess
    const rows = await history.listFor('42');
    expect(rows.map((row) => [row.previousQuantity, row.quantity, row.source])).toEqual([
      [null, 12, 'unknown'],
      [12, 13, 'api'],
    ]);
    // Its time is when it took its place in the history: after the change, never before the row before it.
    expect(rows[1]).toMatchObject({ actor: 'key_1', requestId: 'req-1' });
    expect((rows[1]?.at ?? '') >= changed && (rows[1]?.at ?? '') >= (rows[0]?.at ?? '')).toBe(true);
  });
});
