import { expectUnavailable, type FaultStack, startFaultStack } from '../helpers/storage-faults';

/** What "a bounded time" means here: the SDK budget (2 attempts of 1 s) plus back-off, with slack for the machine. */
const BOUND_MS = 8000;

async function timed<T>(act: () => Promise<T>): Promise<{ outcome: T; ms: number }> {
  const started = performance.now();
  const outcome = await act();
  return { outcome, ms: Math.round(performance.now() - started) };
}

/** Storage trouble answers 503 within a bounded time (docs/api.md, "Limits"), measured on the real clock. */
describe('Load: 503 within the bound while DynamoDB is paused or stopped', () => {
  let stack: FaultStack;
  const figures: string[] = [];

  beforeAll(async () => {
    stack = await startFaultStack();
  });
  beforeEach(async () => {
    await stack.heal();
  });
  afterAll(async () => {
    await stack?.close();
    console.log(`storage faults: ${figures.join('; ')}`);
  });

  it.each([
    ['paused', () => stack.pause()],
    ['stopped', () => stack.stop()],
  ])('answers list and update within the bound while DynamoDB is %s', async (state, fault) => {
    // Prepare
    await fault();
    // Act: at once, each timed from its own start.
    const [listed, updated] = await Promise.all([timed(stack.list), timed(() => stack.update(3))]);
    // Assess
    expectUnavailable(listed.outcome);
    expectUnavailable(updated.outcome);
    figures.push(`${state}: 503 after ${listed.ms} ms (list), ${updated.ms} ms (update)`);
    expect(Math.max(listed.ms, updated.ms)).toBeLessThan(BOUND_MS);
  });

  it('answers within the bound when the keys table cannot be read during authorization', async () => {
    stack.gateway.clearAuthorizerCache();
    await stack.stop();
    const { outcome, ms } = await timed(stack.list);
    expectUnavailable(outcome);
    figures.push(`keys table down: 503 after ${ms} ms`);
    expect(ms).toBeLessThan(BOUND_MS);
  });
});
