import { DEMO_INVENTORY } from '../../local/environment';
import { loadContract } from '../helpers/contract';
import { call, jsonHeaders } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/local-stack';

const ROUTE = '/inventory/changes';

/** An operation of openapi.yaml with its named request and response examples. */
interface ExampleOperation {
  requestBody: { content: Record<string, { examples: Record<string, { value: unknown }> }> };
  responses: Record<string, { content: Record<string, { examples: Record<string, { value: unknown }> }> }>;
}

// The demo inventory npm start seeds: the docs page's "Try it out" and generated contract tests send the examples to it.
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ inventory: DEMO_INVENTORY });
});
afterAll(async () => {
  await stack.close();
});

const send = (method: 'POST' | 'PATCH' | 'GET', path: string, route: string, body?: string, headers = {}) =>
  call(stack.url, method, path, { headers: { ...jsonHeaders(stack.authHeader), ...headers }, body, route });

describe("API: the contract's examples on npm start's demo inventory", () => {
  it("applies the batch example and answers the 200 example's entries", async () => {
    // Prepare
    const operation = loadContract().paths[ROUTE]?.post as ExampleOperation;
    const request = operation.requestBody.content['application/json']?.examples.delivery?.value;
    const answer = operation.responses['200']?.content['application/json']?.examples.applied?.value as {
      items: object[];
    };
    // Act
    const response = await send('POST', ROUTE, ROUTE, JSON.stringify(request));
    // Assess
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ items: answer.items.map((item) => expect.objectContaining(item)) });
  });

  it('applies a PATCH sent with the Idempotency-Key of an earlier batch: a key is scoped to its operation', async () => {
    // Prepare
    const key = crypto.randomUUID();
    const quantity = async () =>
      ((await send('GET', '/inventory/10', '/inventory/{petId}')).json as { quantity: number }).quantity;
    const before = await quantity();
    // Act
    const batch = await send('POST', ROUTE, ROUTE, '{"changes":[{"petId":10,"adjustBy":1}]}', {
      'Idempotency-Key': key,
    });
    const patch = await send('PATCH', '/inventory/10', '/inventory/{petId}', '{"adjustBy":1}', {
      'Idempotency-Key': key,
    });
    // Assess
    expect([batch.status, patch.status]).toEqual([200, 200]);
    expect(patch.headers.get('idempotent-replayed')).toBeNull();
    expect(await quantity()).toBe(before + 2);
  });
});
