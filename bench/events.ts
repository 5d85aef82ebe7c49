import type { DynamoDBRecord } from 'aws-lambda';
import { changeOriginAttribute, inventoryAttributes, LAST_CHANGE } from '../functions/store/inventory-row';
import { apiGatewayProxyEvent, inventoryUpdateEvent, tokenAuthorizerEvent } from '../local/lambda/events';
import { HISTORY_STREAM_MAPPING } from '../service/names';
import { benchInventory, COLD_PATH_INVENTORY } from './inventory';

let streamSequence = 10n ** 20n;

/** A stream event of `records` changes of pets `from`.. by the API, as the history function receives them. */
function streamEvent(from: number, records: number): { Records: DynamoDBRecord[] } {
  const image = (petId: string, quantity: number, requestId: string) => ({
    ...inventoryAttributes({ petId, quantity, status: 'available' }),
    [LAST_CHANGE]: changeOriginAttribute({ source: 'api', actor: 'bench', requestId, at: new Date().toISOString() }),
  });
  const record = (petId: string, sequence: string): DynamoDBRecord => ({
    eventID: `bench-${sequence}`,
    eventName: 'MODIFY',
    eventSource: 'aws:dynamodb',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      Keys: { petId: { N: petId } },
      OldImage: image(petId, 1, `old-${sequence}`) as never,
      NewImage: image(petId, 2, `new-${sequence}`) as never,
      SequenceNumber: sequence,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  });
  return { Records: Array.from({ length: records }, (_, i) => record(String(from + i), String(streamSequence++))) };
}

/** `POST /inventory/changes` setting each of `petIds` to `quantity` (a set always applies, whatever the stock). */
function changesEvent(petIds: readonly string[], quantity: number, requestId: string) {
  const changes = petIds.map((petId) => `{"petId":${petId},"quantity":${quantity}}`);
  return apiGatewayProxyEvent({
    resource: '/inventory/changes',
    path: '/inventory/changes',
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: `{"changes":[${changes.join(',')}]}`,
    requestContext: { requestId },
  });
}

/** How the bench calls a deployed function: its first caller's call, and the calls its peak memory is taken over. */
export interface FunctionCalls {
  first: unknown;
  scenario: string;
  events: unknown[];
}

function calls(scenario: string, count: number, event: (i: number) => unknown): FunctionCalls {
  return { first: event(0), scenario, events: Array.from({ length: count }, (_, i) => event(i)) };
}

/** Each deployed function's calls; the list's memory is measured at each list size instead (bench/list.ts). */
export function functionCalls(key: string): Record<string, FunctionCalls> {
  const get = (resource: string, path: string) => (i: number) =>
    apiGatewayProxyEvent({ resource, path, pathParameters: { petId: '1' }, requestContext: { requestId: `g-${i}` } });
  const batch = HISTORY_STREAM_MAPPING.batchSize;
  // Entries the store holds whenever these run.
  const seeded = benchInventory(0, COLD_PATH_INVENTORY).map((item) => item.petId);
  return {
    'list-inventory': { first: apiGatewayProxyEvent(), scenario: 'GET /inventory at each list size', events: [] },
    'update-inventory': calls('20 PATCH', 20, (i) =>
      inventoryUpdateEvent(String(i + 1), `{"quantity":${i}}`, { requestContext: { requestId: `patch-${i}` } }),
    ),
    'apply-inventory-changes': {
      first: changesEvent(seeded.slice(0, 1), 1, 'changes-first'),
      scenario: `20 POST /inventory/changes of ${seeded.length}`,
      events: Array.from({ length: 20 }, (_, i) => changesEvent(seeded, i, `changes-${i}`)),
    },
    authorizer: calls('20 TOKEN', 20, () => tokenAuthorizerEvent(`Bearer ${key}`)),
    'get-inventory-entry': calls('5 GET', 5, get('/inventory/{petId}', '/inventory/1')),
    // The bench runs without the history poller: the pet's history is empty, the entry read anyway.
    'list-inventory-history': calls('5 GET', 5, get('/inventory/{petId}/history', '/inventory/1/history')),
    // The bench runs without the history poller: the feed is empty, its index read anyway.
    'list-inventory-changes': calls('5 GET', 5, get('/inventory/changes', '/inventory/changes')),
    'get-pet': calls('5 GET (501)', 5, get('/pets/{petId}', '/pets/1')),
    'list-store-orders': calls('5 GET (501)', 5, get('/store/orders', '/store/orders')),
    // The deploy self-check: one run writes a key and calls the stage (npm start) six times.
    'self-check': calls('1 run against npm start', 1, () => ({})),
    // Full batches, the mapping's batch size: the largest event the function is given; the first call is one PATCH.
    'record-history': {
      first: streamEvent(1, 1),
      scenario: `5 stream batches of ${batch}`,
      events: Array.from({ length: 5 }, (_, i) => streamEvent(1 + i * batch, batch)),
    },
  };
}
