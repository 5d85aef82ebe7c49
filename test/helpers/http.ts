import { assertMatchesContract, withinContract } from './contract';

/** A response as a test sees it. */
export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body (undefined when it is not JSON). */
  json: unknown;
}

/**
 * Calls the local gateway over real HTTP and checks the response against openapi.yaml, so every integration test
 * also proves the contract. `route` is the OpenAPI path template the call is meant to hit (undefined for paths the
 * contract does not describe, such as unknown routes).
 */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; route?: string } = {},
): Promise<TestResponse> {
  const response = await fetch(`${baseUrl}${path}`, { method, headers: options.headers, body: options.body });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const result = { status: response.status, headers: response.headers, text, json };
  if (withinContract(new URL(`${baseUrl}${path}`).pathname)) assertMatchesContract(method, options.route, result);
  return result;
}

/** JSON headers plus the bearer key. */
export function jsonHeaders(auth: Record<string, string>): Record<string, string> {
  return { ...auth, 'Content-Type': 'application/json' };
}
