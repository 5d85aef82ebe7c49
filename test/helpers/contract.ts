import type { TestResponse } from './http';

/**
 * Checks a response against openapi.yaml. Until the OpenAPI document lands (issue 7), it checks the part every
 * response must satisfy: a non-2xx body is exactly the Error object with `status` equal to the HTTP status.
 */
export function assertMatchesContract(
  _method: string,
  _route: string | undefined,
  response: Omit<TestResponse, never>,
): void {
  if (response.status < 300) return;
  const body = response.json as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || Object.keys(body).sort().join(',') !== 'code,message,status') {
    throw new Error(`Error body expected for ${response.status}, got ${response.text}`);
  }
  if (body.status !== response.status || typeof body.code !== 'string' || typeof body.message !== 'string') {
    throw new Error(`Error body does not match status ${response.status}: ${response.text}`);
  }
}
