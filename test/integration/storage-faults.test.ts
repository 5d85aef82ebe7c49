import { expectUnavailable, type FaultStack, startFaultStack } from '../helpers/storage-faults';

/**
 * Each test starts from healthy storage and a warm authorizer cache (beforeEach), whatever the test before it left,
 * so any one of them can run alone. How long the 503s take is a timing figure: test/load/storage-fault-bounds.test.ts.
 */
describe('Reliability: DynamoDB paused, stopped and back, through the local gateway', () => {
  let stack: FaultStack;

  beforeAll(async () => {
    stack = await startFaultStack();
  });
  beforeEach(async () => {
    await stack.heal();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('answers 200 while storage is healthy', async () => {
    expect((await stack.list()).status).toBe(200);
    expect((await stack.update(2)).status).toBe(200);
  });

  it('answers list and update with 503 SERVICE_UNAVAILABLE and Retry-After while DynamoDB is paused', async () => {
    // Prepare
    stack.pause();
    // Act
    const listed = await stack.list();
    const updated = await stack.update(3);
    // Assess
    expectUnavailable(listed);
    expectUnavailable(updated);
  });

  it('recovers by itself when DynamoDB resumes, without restarting anything', async () => {
    // Prepare
    stack.pause();
    expectUnavailable(await stack.list());
    // Act: heal resumes the process and polls until the list answers 200 (or fails the test).
    await stack.heal();
    // Assess
    expect(JSON.parse((await stack.update(4)).text)).toEqual({ petId: 1, quantity: 4, status: 'available' });
  });

  it('answers 503 while DynamoDB is stopped, and recovers when it is started again on the same port', async () => {
    // Prepare
    await stack.stop();
    // Act
    const listed = await stack.list();
    const updated = await stack.update(5);
    await stack.heal();
    // Assess: the data survived, and the gateway and its handlers are the same as before.
    expectUnavailable(listed);
    expectUnavailable(updated);
    expect(JSON.parse((await stack.update(6)).text)).toEqual({ petId: 1, quantity: 6, status: 'available' });
  });

  it('answers with a JSON Error body (503 SERVICE_UNAVAILABLE) when the keys table cannot be read during authorization', async () => {
    // Prepare: no cached decision, storage down.
    stack.gateway.clearAuthorizerCache();
    await stack.stop();
    // Act + Assess
    expectUnavailable(await stack.list());
  });
});
