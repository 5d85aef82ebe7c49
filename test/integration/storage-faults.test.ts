import { defaultFunctionTimeoutMs } from '../../local/gateway';
import { expectUnavailable, type FaultStack, startFaultStack } from '../helpers/storage-faults';

/**
 * Each test starts from healthy storage and a warm authorizer cache (beforeEach), whatever the test before it left,
 * so any one of them can run alone. How long the 503s take is a timing figure: test/load/storage-fault-bounds.test.ts.
 */
describe('Reliability: DynamoDB paused, stopped and back, through the local gateway', () => {
  let stack: FaultStack;
  /** The update function's timeout for one test: shorter than the SDK's 2 attempts of 1 s each under faults. */
  let updateTimeoutMs: number | undefined;

  beforeAll(async () => {
    stack = await startFaultStack({
      functionTimeoutMs: (handler) =>
        handler === 'update-inventory' && updateTimeoutMs !== undefined
          ? updateTimeoutMs
          : defaultFunctionTimeoutMs(handler),
    });
  });
  beforeEach(async () => {
    updateTimeoutMs = undefined;
    await stack.heal();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('answers 200 while storage is healthy', async () => {
    expect((await stack.list()).status).toBe(200);
    expect((await stack.update(2)).status).toBe(200);
    expect((await stack.history()).status).toBe(200);
  });

  it("answers list, update and a pet's history with 503 SERVICE_UNAVAILABLE and Retry-After while DynamoDB is paused", async () => {
    // Prepare
    stack.pause();
    // Act: at once, each waiting out the SDK's budget on its own.
    const [listed, updated, history] = await Promise.all([stack.list(), stack.update(3), stack.history()]);
    // Assess
    expectUnavailable(listed);
    expectUnavailable(updated);
    expectUnavailable(history);
  });

  /**
   * middy (@middy/core, option timeoutEarlyInMillis: EARLY_TIMEOUT_MS, functions/http/middleware.ts) stops a handler before its Lambda timeout
   * ("Configure Lambda function timeout", https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html)
   * and throws a TimeoutError, which the function answers itself: as storage trouble, like API Gateway's answer to
   * the Lambda timeout (INTEGRATION_FAILURE, 503), not as 500 INTERNAL.
   */
  it('answers 503 SERVICE_UNAVAILABLE, not 500, when a PATCH runs out of its time waiting for paused storage', async () => {
    // Prepare: 0.7 s, well inside the SDK's budget (2 attempts of 1 s each), so the function's own deadline (0.2 s, after
    // the early time-out's 0.5 s margin) comes first.
    updateTimeoutMs = 700;
    stack.pause();
    // Act
    const updated = await stack.update(7);
    // Assess: the function's own answer (its message, not the INTEGRATION_FAILURE response the gateway gives when a
    // function has not answered by its time-out), so it came before the deadline, which the SDK alone (2 s) cannot.
    expectUnavailable(updated);
    expect(JSON.parse(updated.text).message).toMatch(/^Inventory storage is temporarily unavailable/);
  });

  it('recovers by itself when DynamoDB resumes, without restarting anything', async () => {
    // Prepare
    stack.pause();
    expectUnavailable(await stack.list());
    // Act: heal resumes the process and polls until the list answers 200 (or fails the test).
    await stack.heal();
    // Assess
    expect(JSON.parse((await stack.update(4)).text)).toMatchObject({ petId: 1, quantity: 4, status: 'available' });
  });

  it('answers 503 while DynamoDB is stopped, and recovers when it is started again on the same port', async () => {
    // Prepare
    await stack.stop();
    // Act
    const listed = await stack.list();
    const updated = await stack.update(5);
    await stack.heal();
    // Assess: the gateway and its handlers, never restarted, reach storage again on its port.
    expectUnavailable(listed);
    expectUnavailable(updated);
    expect(JSON.parse((await stack.update(6)).text)).toMatchObject({ petId: 1, quantity: 6, status: 'available' });
  });

  it('answers with a JSON Error body (503 SERVICE_UNAVAILABLE) when the keys table cannot be read during authorization', async () => {
    // Prepare: no cached decision, storage down.
    stack.gateway.clearAuthorizerCache();
    await stack.stop();
    // Act + Assess
    expectUnavailable(await stack.list());
  });
});
