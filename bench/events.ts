/** How the bench calls each deployed function: its first caller's call, and the calls its peak memory is taken over. */
import type { DynamoDBRecord } from 'aws-lambda';
import { changeOriginAttribute, inventoryAttributes, LAST_CHANGE } from '../functions/store/inventory-row';
import { apiGatewayProxyEvent, inventoryUpdateEvent, tokenAuthorizerEvent } from '../local/lambda/events';
import { HISTORY_STREAM_MAPPING } from '../service/names';
import { benchInventory, COLD_PATH_INVENTORY } from './inventory';

let sequence = 10n ** 20n;

/** A stream event of `records` changes by the API of pets `from`.., as the history function receives it. */
function streamEvent(from: number, records: number): { Records: DynamoDBRecord[] } {
  const image = (petId: string, quantity: number, requestId: string) => ({
    ...inventoryAttributes({ petId, quantity, status: 'available' }),
    [LAST_CHANGE]: changeOriginAttribute({ source: 'api', actor: 'bench', requestId, at: new Date().toISOString() }),
  });
  const record = (petId: string, number: string): DynamoDBRecord => ({
    eventID: `bench-${number}`,
    eventName: 'MODIFY',
    eventSource: 'aws:dynamodb',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      Keys: { petId: { N: petId } },
      OldImage: image(petId, 1, `old-${number}`) as never,
      NewImage: image(petId, 2, `new-${number}`) as never,
      SequenceNumber: number,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  });
  return { Records: Array.from({ length: records }, (_, i) => record(String(from + i), String(sequence++))) };
}

/** `POST /inventory/changes` setting each of `petIds` to `quantity` (a set applies whatever the stock). */
const changesEvent = (petIds: readonly string[], quantity: number) =>
  apiGatewayProxyEvent({
    resource: '/inventory/changes',
    path: '/inventory/changes',
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: `{"changes":[${petIds.map((petId) => `{"petId":${petId},"quantity":${quantity}}`).join(',')}]}`,
  });

const calls = (scenario: string, count: number, event: (i: number) => unknown, first = event(0)) => ({
  first,
  scenario,
  events: Array.from({ length: count }, (_, i) => event(i)),
});

/** Each deployed function's calls; the list's memory is taken at each list size instead (bench/list.ts). */
export function functionCalls(key: string): Record<string, ReturnType<typeof calls>> {
  const get = (resource: string, path: string) => () =>
    apiGatewayProxyEvent({ resource, path, pathParameters: { petId: '1' } });
  const batch = HISTORY_STREAM_MAPPING.batchSize;
  // The entries the store holds whenever these run.
  const seeded = benchInventory(0, COLD_PATH_INVENTORY).map((item) => item.petId);
  return {
    'list-inventory': calls(
      'GET /inventory at each list size',
      0,
      () => apiGatewayProxyEvent(),
      apiGatewayProxyEvent(),
    ),
    'update-inventory': calls('20 PATCH', 20, (i) =>
      inventoryUpdateEvent(String(i + 1), `{"quantity":${i}}`, { requestContext: { requestId: `patch-${i}` } }),
    ),
    'apply-inventory-changes': calls(
      `20 POST /inventory/changes of ${seeded.length}`,
      20,
      (i) => changesEvent(seeded, i),
      changesEvent(seeded.slice(0, 1), 1),
    ),
    authorizer: calls('20 TOKEN', 20, () => tokenAuthorizerEvent(`Bearer ${key}`)),
    'get-inventory-entry': calls('5 GET', 5, get('/inventory/{petId}', '/inventory/1')),
    // The bench runs without the history poller: the pet's history is empty, the entry read anyway.
    'list-inventory-history': calls('5 GET', 5, get('/inventory/{petId}/history', '/inventory/1/history')),
    'get-pet': calls('5 GET (501)', 5, get('/pets/{petId}', '/pets/1')),
    'list-store-orders': calls('5 GET (501)', 5, get('/store/orders', '/store/orders')),
    // The deploy self-check: one run writes a key and calls the stage (npm start) six times.
    'self-check': calls('1 run against npm start', 1, () => ({})),
    // Full batches of the mapping's size, the largest event the function is given; its first call is one change.
    'record-history': calls(
      `5 stream batches of ${batch}`,
      5,
      (i) => streamEvent(1 + i * batch, batch),
      streamEvent(1, 1),
    ),
  };
}
