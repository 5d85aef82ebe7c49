import { type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { inventoryAttributes } from '../../functions/store/inventory-row';
import { type StreamPoller, startStreamPoller } from '../../local/lambda/stream-poller';
import { tableStreamArn } from '../../local/tables';
import type { TableNames } from '../../service/local-dynamodb';
import { freshTables, testClient, testEndpoint } from '../helpers/local-stack';
import { until } from '../helpers/until';

/**
 * The local stand-in for Lambda's event source mapping on a DynamoDB stream hands the history function the event AWS
 * Lambda Developer Guide, "Using AWS Lambda with Amazon DynamoDB" shows: every local test of that function rests on it.
 * What the function then writes is tested through the API (inventory-history.test.ts, inventory-feed.test.ts).
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
  const start = async () => {
    poller = startStreamPoller({
      endpoint: testEndpoint(),
      streamArn: await tableStreamArn(client, tables.inventory),
      pollIntervalMs: 50,
      log: () => undefined,
      handler: async (event) => {
        events.push(event);
        return { batchItemFailures: [] };
      },
    });
  };

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
    await start();
    await until(() => events.flatMap((event) => event.Records).length >= 2);
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
});
