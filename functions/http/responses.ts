import type { Readable } from 'node:stream';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { COMMON_HEADERS } from '../../service/common-headers';
import { ERROR_CODES, type ErrorCode } from '../../service/error-codes';
import { API_STAGE_NAME } from '../../service/routes';
import { encodeFeedCursor, type FeedCursor } from '../inventory/feed-query';

/** Lambda's synchronous invocation payload limit, request and response alike ("Lambda quotas"): 6 MB, as 6 MiB. */
export const LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** What a streaming API function answers: a stream, or the Error body's string once the chain mapped an error. */
export interface StreamedApiResult<Body extends Readable | string = Readable | string> {
  statusCode: number;
  headers?: Record<string, string>;
  body: Body;
}

/** A JSON response from an already serialized body. */
export function jsonResponse(
  statusCode: number,
  body: string,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return { statusCode, headers: { ...COMMON_HEADERS, ...headers }, body };
}

/**
 * A `Link` (RFC 8288) to `path` under the stage, relative to the API's host: a paged answer's next page, or what
 * `rel` names.
 */
export function nextPageLink(path: string, query: Readonly<Record<string, string | number>>, rel = 'next'): string {
  const parameters = Object.entries(query).map(([name, value]) => `${name}=${value}`);
  return `</${API_STAGE_NAME}${path}?${parameters.join('&')}>; rel="${rel}"`;
}

/** The `Link` to the change feed from `cursor` on: a feed page's rel="next", the list's rel="changes". */
export function changesLink(cursor: FeedCursor, rel: 'next' | 'changes'): string {
  return nextPageLink('/inventory/changes', { cursor: encodeFeedCursor(cursor) }, rel);
}

/** The spec's Error body `{code, message, status}` as a JSON string. */
export function errorBody(code: ErrorCode, message: string): string {
  return JSON.stringify({ code, message, status: ERROR_CODES[code] });
}

/** A response carrying the spec's Error body, with the status that belongs to `code`. */
export function errorResponse(
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return jsonResponse(ERROR_CODES[code], errorBody(code, message), headers);
}
