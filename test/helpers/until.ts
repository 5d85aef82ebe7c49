/**
 * Resolves once `condition` holds, asking again every 25 ms; rejects after `limitMs`, so a change that never comes
 * fails its test with a reason rather than at jest's time-out.
 */
export async function until(condition: () => boolean | Promise<boolean>, limitMs = 20_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`the condition did not hold within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
