/** The error a promise rejects with; fails the test when it resolves (unlike a check inside a `catch`). */
export async function rejection(
  promise: Promise<unknown>,
): Promise<Error & { code?: string; $metadata?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; $metadata?: Record<string, unknown> };
  }
  throw new Error('expected a rejection');
}
