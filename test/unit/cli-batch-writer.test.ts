import type { BatchWriteItemCommand, BatchWriteItemCommandOutput, WriteRequest } from '@aws-sdk/client-dynamodb';
import {
  type BatchWriteClient,
  IncompleteWriteError,
  type WriteInventoryOptions,
  writeInventory,
} from '../../cli/inventory/batch-writer';
import type { InventoryItem } from '../../functions/inventory/types';

const TABLE = 'inventory-test';

function items(count: number): InventoryItem[] {
  return Array.from({ length: count }, (_, index) => ({
    petId: String(9223372036854775807n - BigInt(index)),
    quantity: index,
    status: 'available' as const,
  }));
}

/** A fake DynamoDB that answers each call with `answer(requests, callNumber)`, recording calls and concurrency. */
function aFakeClient(
  answer: (requests: WriteRequest[], call: number) => WriteRequest[] | Error = () => [],
  delayMs = 0,
) {
  const calls: WriteRequest[][] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    calls,
    maxInFlight: () => maxInFlight,
    async send(command: BatchWriteItemCommand): Promise<BatchWriteItemCommandOutput> {
      const requests = command.input.RequestItems?.[TABLE] ?? [];
      calls.push(requests);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      inFlight--;
      const outcome = answer(requests, calls.length);
      if (outcome instanceof Error) throw outcome;
      return { UnprocessedItems: outcome.length > 0 ? { [TABLE]: outcome } : {}, $metadata: {} };
    },
  };
}

/** Writes `count` items to TABLE through `client`, sleeping not at all unless `options` give a sleep. */
const write = (client: BatchWriteClient, count: number, options: Partial<WriteInventoryOptions> = {}) =>
  writeInventory(items(count), { client, tableName: TABLE, sleep: async () => undefined, ...options });

describe('Function: writeInventory', () => {
  it('writes 25 puts per call with int64 ids as exact Number strings and the list shard of each entry', async () => {
    // Prepare
    const client = aFakeClient();

    // Act
    const result = await write(client, 60);

    // Assess
    expect(result).toEqual({ written: 60, retries: 0 });
    expect(client.calls.map((call) => call.length)).toEqual([25, 25, 10]);
    expect(client.calls[0]?.[0]).toEqual({
      PutRequest: {
        Item: {
          petId: { N: '9223372036854775807' },
          quantity: { N: '0' },
          status: { S: 'available' },
          version: { N: '1' },
          listShard: { N: '0' },
        },
      },
    });
  });

  it('retries only the unprocessed items, after a jittered back-off that doubles each attempt', async () => {
    // Prepare
    const client = aFakeClient((requests, call) => (call <= 3 ? requests.slice(0, 5) : []));
    const delays: number[] = [];
    const sleep = async (ms: number) => {
      delays.push(ms);
    };

    // Act
    const result = await write(client, 25, { baseDelayMs: 100, random: () => 0.999, sleep });

    // Assess
    expect(result).toEqual({ written: 25, retries: 3 });
    expect(client.calls.map((call) => call.length)).toEqual([25, 5, 5, 5]);
    expect(delays).toEqual([99, 199, 399]);
  });

  it('caps the back-off at maxDelayMs and draws each delay from zero to the cap (full jitter)', async () => {
    // Prepare
    const client = aFakeClient((requests, call) => (call <= 4 ? requests : []));
    const delays: number[] = [];
    const randoms = [0, 0.5, 0.999, 0.999];

    // Act
    await write(client, 1, {
      baseDelayMs: 100,
      maxDelayMs: 250,
      random: () => randoms.shift() ?? 0,
      sleep: async (ms) => {
        delays.push(ms);
      },
    });

    // Assess
    expect(delays).toEqual([0, 100, 249, 249]);
  });

  it('never has more than `concurrency` calls in flight', async () => {
    // Prepare
    const client = aFakeClient(() => [], 5);

    // Act
    await write(client, 25 * 20, { concurrency: 3 });

    // Assess
    expect(client.calls).toHaveLength(20);
    expect(client.maxInFlight()).toBe(3);
  });

  it('reports progress as a running total, unprocessed items counted once written', async () => {
    // Prepare
    const client = aFakeClient((requests, call) => (call === 1 ? requests.slice(0, 5) : []));
    const progress: number[] = [];

    // Act
    const result = await write(client, 50, { concurrency: 1, onProgress: (written) => progress.push(written) });

    // Assess
    expect(result).toEqual({ written: 50, retries: 1 });
    expect(progress).toEqual([20, 25, 50]);
  });

  it('gives up after maxAttempts, starts no new batch and says how many items were written', async () => {
    // Prepare
    const client = aFakeClient((requests, call) => (call >= 2 ? requests.slice(0, 1) : []));

    // Act
    const outcome = await write(client, 100, { concurrency: 1, maxAttempts: 2 }).catch((error: unknown) => error);

    // Assess
    expect(outcome).toBeInstanceOf(IncompleteWriteError);
    expect(outcome).toMatchObject({ written: 49, total: 100 });
    expect(((outcome as Error).cause as Error).message).toMatch(/1 items unprocessed after 2 attempts/);
    expect(client.calls.map((call) => call.length)).toEqual([25, 25, 1]);
  });

  it("leaves a failed call to the SDK client's own retries: an error it throws stops the write", async () => {
    // Prepare
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    const client = aFakeClient(() => throttled);

    // Act
    const outcome = await write(client, 30, { concurrency: 1 }).catch((error: unknown) => error);

    // Assess
    expect(outcome).toBeInstanceOf(IncompleteWriteError);
    expect((outcome as Error).cause).toBe(throttled);
    expect(client.calls).toHaveLength(1);
  });
});
