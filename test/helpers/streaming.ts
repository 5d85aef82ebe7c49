import { constants, gunzipSync } from 'node:zlib';
import { batchesOf } from '../../functions/inventory/json';
import type { InventoryRepository } from '../../functions/inventory/repository';
import type { InventoryItem } from '../../functions/inventory/types';
import { invokeStreamingHandler } from '../../local/lambda/streaming';
import { anInventoryItem } from '../fixtures/builders';

/** What a client of a streamed response would have received. */
export interface StreamedOutcome {
  statusCode: number;
  headers: Record<string, string>;
  /** The body bytes as sent (compressed when Content-Encoding says so). */
  raw: Buffer;
  /** How many chunks the body arrived in. */
  chunks: number;
  /** Whether the body ended normally; false when the stream was aborted after its first byte. */
  completed: boolean;
  /** The body decoded (gunzipped when gzip); only when completed. */
  text?: string;
}

/**
 * Invokes a streaming handler as the Lambda runtime does, reads its whole answer as API Gateway would, and waits
 * for the invocation to end.
 */
export async function callStreaming(handler: unknown, event: unknown, context: unknown): Promise<StreamedOutcome> {
  const { response, completion } = invokeStreamingHandler(handler, event, context);
  const { statusCode, headers, body } = await response;
  const parts: Buffer[] = [];
  const completed = await new Promise<boolean>((resolve) => {
    body.on('data', (chunk: Buffer) => parts.push(chunk));
    body.on('end', () => resolve(true));
    body.on('error', () => resolve(false));
  });
  // The invocation's end, as Lambda would wait for it: whatever the function does after its last byte is done.
  await completion.catch(() => undefined);
  const raw = Buffer.concat(parts);
  const outcome: StreamedOutcome = { statusCode, headers, raw, chunks: parts.length, completed };
  if (completed) outcome.text = (headers['Content-Encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
  return outcome;
}

/**
 * Whether bytes a client received could be taken for a whole JSON document, decompressed first when gzip by the
 * most lenient decoder (one that returns what it could decode of a cut-off stream).
 */
export function parsesAsJson(raw: Buffer, gzip: boolean): boolean {
  try {
    const text = gzip ? gunzipSync(raw, { finishFlush: constants.Z_SYNC_FLUSH }) : raw;
    JSON.parse(text.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

/**
 * A repository listing `count` entries of which the one at `brokenAt` cannot be serialized: the list function then
 * fails once its body has started, as a deployed one failing mid-stream.
 */
export function entriesBreakingAt(count: number, brokenAt: number): InventoryRepository {
  const items = Array.from({ length: count }, (_, i) =>
    i === brokenAt
      ? (Object.defineProperty({ quantity: 1, status: 'sold' }, 'petId', {
          get: () => {
            throw new Error('entry could not be serialized');
          },
        }) as InventoryItem)
      : { petId: String(i), quantity: 1, status: 'available' as const },
  );
  // In batches, as the table yields them: the first ones are sent before the broken entry is reached.
  return listOnlyRepository(async function* () {
    yield* batchesOf(items, 1024);
  });
}

/** A repository that only lists, with `list`; any other call fails the test. */
export function listOnlyRepository(list: InventoryRepository['list']): InventoryRepository {
  const unused = async (): Promise<never> => {
    throw new Error('not used');
  };
  return { list, applyChange: unused, applyChanges: unused, get: unused };
}

/** A list of pets 1 and 2 whose second batch is read only once `release` is called: what was sent before it shows. */
export function listHeldAfterFirstBatch(): { repository: InventoryRepository; release: () => void } {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const repository = listOnlyRepository(async function* () {
    yield [anInventoryItem({ petId: '1' })];
    await held;
    yield [anInventoryItem({ petId: '2' })];
  });
  return { repository, release };
}
