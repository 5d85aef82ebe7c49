import { type LocalApiProcess, startLocalApiProcess } from '../helpers/api-process';

const READY_TIMEOUT_MS = 90_000;

describe('Load: npm start throttles a burst as staging does', () => {
  let api: LocalApiProcess;

  beforeAll(async () => {
    api = await startLocalApiProcess({ readyTimeoutMs: READY_TIMEOUT_MS });
  }, READY_TIMEOUT_MS + 10_000);
  afterAll(async () => {
    await api?.stop();
  });

  // "Throttle requests to your REST APIs for better throughput in API Gateway"
  // (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html): npm start
  // applies staging's stage throttling (rate 20/s, burst 40, per method), so a client can try its back-off locally.
  // Timing-dependent: the 80 requests must arrive within about a second, which a busy machine may not manage; the
  // token bucket itself is tested on an injected clock (local-gateway-semantics.test.ts).
  it("throttles a burst past staging's limit with 429 THROTTLED and Retry-After, as staging does", async () => {
    // Act: one method (the catch-all's), far past its burst, all at once.
    const responses = await Promise.all(
      Array.from({ length: 80 }, async () => {
        const response = await fetch(`${api.baseUrl}/no/such/route`);
        return {
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          body: await response.json(),
        };
      }),
    );
    // Assess
    const throttled = responses.filter((response) => response.status === 429);
    expect(throttled.length).toBeGreaterThanOrEqual(20);
    expect(responses.filter((response) => response.status === 401).length).toBeGreaterThanOrEqual(40);
    for (const response of throttled) {
      expect(response.retryAfter).toBe('1');
      expect(response.body).toMatchObject({ code: 'THROTTLED', status: 429 });
    }
    expect(api.output()).toContain('Throttling: 20 requests/s, burst 40, per method');
  });
});
