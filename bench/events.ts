/**
 * How the bench calls each deployed function in a fresh process: its first caller's call (the cold path), then the
 * calls its peak memory is taken over (`scenario`).
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { signedInventoryAttributes } from '../functions/store/inventory-row';
import { apiGatewayProxyEvent, inventoryUpdateEvent, tokenAuthorizerEvent } from '../local/lambda/events';
import { HISTORY_STREAM_MAPPING } from '../service/names';
import { benchInventory, COLD_PATH_INVENTORY } from './inventory';

let sequence = 10n ** 20n;

/** A stream event of `records` changes by the API of pets `from`.., as the history function receives it. */
function streamEvent(from: number, records: number): { Records: DynamoDBRecord[] } {
  const image = (petId: string, quantity: number, requestId: string) =>
    signedInventoryAttributes(
      { petId, quantity, status: 'available' },
      { source: 'api', actor: 'bench', requestId, at: new Date().toISOString() },
    );
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

const times = (count: number, event: (i: number) => unknown) => Array.from({ length: count }, (_, i) => event(i));

/** Each function's calls, the first one its cold path's; the list's memory is taken at each list size instead. */
export function functionCalls(key: string): Record<string, { scenario: string; events: unknown[] }> {
  const get = (resource: string, path: string) => () =>
    apiGatewayProxyEvent({ resource, path, pathParameters: { petId: '1' } });
  const pets = benchInventory(0, COLD_PATH_INVENTORY).map((item) => item.petId);
  const patch = (i: number) => inventoryUpdateEvent(pets[i % pets.length] ?? '1', `{"quantity":${i}}`);
  const batch = HISTORY_STREAM_MAPPING.batchSize;
  return {
    'list-inventory': { scenario: '', events: [apiGatewayProxyEvent()] },
    'update-inventory': { scenario: '20 PATCH', events: times(20, patch) },
    'apply-inventory-changes': {
      scenario: `20 POST /inventory/changes of ${pets.length}`,
      events: [changesEvent(pets.slice(0, 1), 1), ...times(20, (i) => changesEvent(pets, i))],
    },
    authorizer: { scenario: '20 TOKEN', events: times(20, () => tokenAuthorizerEvent(`Bearer ${key}`)) },
    'get-inventory-entry': { scenario: '5 GET', events: times(5, get('/inventory/{petId}', '/inventory/1')) },
    // The bench runs without the history poller: the pet's history is empty, the entry read anyway.
    'list-inventory-history': {
      scenario: '5 GET',
      events: times(5, get('/inventory/{petId}/history', '/inventory/1/history')),
    },
    // The bench runs without the history poller: the feed is empty, its index read anyway.
    'list-inventory-changes': { scenario: '5 GET', events: times(5, get('/inventory/changes', '/inventory/changes')) },
    'get-pet': { scenario: '5 GET (501)', events: times(5, get('/pets/{petId}', '/pets/1')) },
    'list-store-orders': { scenario: '5 GET (501)', events: times(5, get('/store/orders', '/store/orders')) },
    // The deploy self-check: one run writes a key and calls the stage (npm start) six times.
    'self-check': { scenario: '1 run against npm start', events: [{}] },
    // A first call of one change, then full batches of the mapping's size, the largest event the function is given.
    'record-history': {
      scenario: `5 stream batches of ${batch}`,
      events: [streamEvent(1, 1), ...times(5, (i) => streamEvent(1 + i * batch, batch))],
    },
  };
}
