import type { DynamoDBRecord } from 'aws-lambda';
import { changeOriginAttribute, inventoryAttributes, LAST_CHANGE } from '../functions/store/inventory-row';
import type { DeployedBundle } from '../infra/synthesized-assets';
import { apiGatewayProxyEvent, inventoryUpdateEvent, tokenAuthorizerEvent } from '../local/lambda/events';
import { HISTORY_STREAM_MAPPING } from '../service/names';
import { type ProbeOptions, probeFailure, runProbe } from './probe-child';
import { columnsTable, round } from './stats';

/** Peak memory of one function instance (a fresh process running its bundle), in MB. */
export interface MemoryFigure {
  function: string;
  scenario: string;
  maxRssMb: number;
  maxRssAfterInitMb: number;
  heapUsedPeakMb: number;
}

/** `file`'s peak memory over `options.events` in a fresh process; throws when an invocation failed. */
export async function probeMemory(
  fn: string,
  scenario: string,
  file: string,
  options: ProbeOptions,
): Promise<MemoryFigure> {
  const probe = await runProbe('invoke', file, options);
  const failure = probe.invocations.map(probeFailure).find((message) => message !== undefined);
  if (failure) throw new Error(`${fn} (${scenario}) failed in its probe: ${failure}`);
  const mb = (kb: number) => round(kb / 1024);
  return {
    function: fn,
    scenario,
    maxRssMb: mb(probe.maxRssKb),
    maxRssAfterInitMb: mb(probe.maxRssInitKb),
    heapUsedPeakMb: mb(probe.heapUsedPeakKb),
  };
}

let streamSequence = 10n ** 20n;

/**
 * A DynamoDBStreamEvent with `records` changes of pets `from`.. (quantity 1 to 2, by the API), as the inventory
 * table's stream delivers them to the history function; sequence numbers are unique per call.
 */
export function streamEvent(from: number, records: number): { Records: DynamoDBRecord[] } {
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

/** What each function but the list is given in its memory probe (the list's is measured at every list size). */
function memoryScenarios(key: string): Record<string, { scenario: string; events: unknown[] }> {
  const repeat = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i));
  const gets = (resource: string, path: string) =>
    repeat(5, (i) =>
      apiGatewayProxyEvent({ resource, path, pathParameters: { petId: '1' }, requestContext: { requestId: `g-${i}` } }),
    );
  const batch = HISTORY_STREAM_MAPPING.batchSize;
  return {
    'update-inventory': {
      scenario: '20 PATCH',
      events: repeat(20, (i) =>
        inventoryUpdateEvent(String(i + 1), `{"quantity":${i}}`, { requestContext: { requestId: `patch-${i}` } }),
      ),
    },
    authorizer: { scenario: '20 TOKEN', events: repeat(20, () => tokenAuthorizerEvent(`Bearer ${key}`)) },
    'get-inventory-entry': { scenario: '5 GET', events: gets('/inventory/{petId}', '/inventory/1') },
    'get-pet': { scenario: '5 GET (501)', events: gets('/pets/{petId}', '/pets/1') },
    'list-store-orders': { scenario: '5 GET (501)', events: gets('/store/orders', '/store/orders') },
    'self-check': { scenario: '1 run against npm start', events: [{}] },
    // Full batches, the mapping's batch size: the largest event the function is given.
    'record-history': {
      scenario: `5 stream batches of ${batch}`,
      events: repeat(5, (i) => streamEvent(1 + i * batch, batch)),
    },
  };
}

/** Each function's peak memory but the list's, in a fresh process running its bundle as deployed. */
export async function measureFunctionMemory(
  bundles: readonly DeployedBundle[],
  env: Record<string, string>,
  key: string,
): Promise<MemoryFigure[]> {
  const scenarios = memoryScenarios(key);
  const figures: MemoryFigure[] = [];
  for (const bundle of bundles.filter((b) => b.handler !== 'list-inventory')) {
    const plan = scenarios[bundle.handler];
    if (!plan) throw new Error(`no memory scenario for ${bundle.handler}`);
    figures.push(await probeMemory(bundle.handler, plan.scenario, bundle.file, { env, events: plan.events }));
  }
  return figures;
}

export function memoryTable(memory: readonly MemoryFigure[]): string {
  return columnsTable(memory, [
    ['function', (m) => m.function],
    ['scenario', (m) => m.scenario],
    ['max RSS', (m) => `${m.maxRssMb} MB`],
    ['after init', (m) => `${m.maxRssAfterInitMb} MB`],
    ['heap peak', (m) => `${m.heapUsedPeakMb} MB`],
  ]);
}
