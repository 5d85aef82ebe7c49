import autocannon from 'autocannon';
import type { InventoryItem } from '../../functions/inventory/types';
import { jsonHeaders } from '../helpers/http';
import { snapshotTable, startTestStack, type TestStack } from '../helpers/local-stack';
import { closeRawAgent, rawRequest } from '../helpers/raw-http';

const PETS: InventoryItem[] = Array.from({ length: 30 }, (_, i) => ({
  petId: String(100 + i),
  quantity: 0,
  status: 'available',
}));

describe('Reliability: concurrent writers through the local gateway', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ inventory: PETS });
  });
  afterAll(async () => {
    closeRawAgent();
    await stack.close();
  });

  function patch(petId: string, quantity: number) {
    return rawRequest(stack.url, {
      method: 'PATCH',
      path: `/v1/inventory/${petId}`,
      headers: jsonHeaders(stack.authHeader),
      body: JSON.stringify({ quantity }),
    });
  }

  async function quantities(): Promise<Map<string, number>> {
    const response = await rawRequest(stack.url, { method: 'GET', path: '/v1/inventory', headers: stack.authHeader });
    const items = JSON.parse(response.text) as { petId: number; quantity: number }[];
    return new Map(items.map((item) => [String(item.petId), item.quantity]));
  }

  it('answers 300 simultaneous updates of one pet with 200 each, and the pet ends holding one of the written values', async () => {
    // Act
    const written = Array.from({ length: 300 }, (_, i) => 1000 + i);
    const responses = await Promise.all(written.map((quantity) => patch('100', quantity)));
    // Assess
    expect(responses.map((r) => r.status)).toEqual(written.map(() => 200));
    responses.forEach((response, i) => {
      expect(JSON.parse(response.text)).toEqual({
        petId: 100,
        quantity: written[i],
        status: 'available',
        version: expect.any(Number),
      });
    });
    expect(written).toContain((await quantities()).get('100'));
  });

  it('answers 600 simultaneous updates spread over 30 pets with 200 each; no entry is created or lost', async () => {
    // Prepare
    const writes = Array.from({ length: 600 }, (_, i) => ({
      petId: PETS[i % PETS.length]?.petId ?? '100',
      quantity: i,
    }));
    // Act
    const responses = await Promise.all(writes.map((w) => patch(w.petId, w.quantity)));
    // Assess
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const final = await quantities();
    expect([...final.keys()].sort()).toEqual(PETS.map((p) => p.petId).sort());
    for (const pet of PETS) {
      const writtenToPet = writes.filter((w) => w.petId === pet.petId).map((w) => w.quantity);
      expect(writtenToPet).toContain(final.get(pet.petId));
    }
  });

  it('sustains a bounded loopback load of mixed list and update calls with zero errors and zero non-2xx answers', async () => {
    // Prepare
    const before = (await snapshotTable(stack.client, stack.tables.inventory)).split('\n').length;
    // Act
    const result = await autocannon({
      url: stack.url,
      connections: 16,
      duration: 4,
      timeout: 10,
      requests: [
        { method: 'GET', path: '/v1/inventory', headers: stack.authHeader },
        { method: 'PATCH', path: '/v1/inventory/101', headers: jsonHeaders(stack.authHeader), body: '{"quantity":7}' },
      ],
    });
    console.log(
      `load: ${result.requests.total} requests in ${result.duration} s, ${result.requests.average.toFixed(0)} req/s, ` +
        `latency p50 ${result.latency.p50} ms p99 ${result.latency.p99} ms max ${result.latency.max} ms, ` +
        `errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx}`,
    );
    // Assess
    expect(result.requests.total).toBeGreaterThan(100);
    expect(result.errors).toBe(0);
    expect(result.timeouts).toBe(0);
    expect(result.non2xx).toBe(0);
    expect((await snapshotTable(stack.client, stack.tables.inventory)).split('\n')).toHaveLength(before);
  });
});
