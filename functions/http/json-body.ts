import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mediaTypeOf } from '../../service/integration-request';
import { ValidationError } from '../inventory/errors';
import { CHANGES_SHAPE, UPDATE_SHAPE } from '../inventory/update';
import { headerValue } from './headers';
import { HttpError } from './http-error';

/**
 * Largest request body of a PATCH, in bytes. The longest valid one, every member at its longest and a 255-character
 * reference of characters past U+FFFF as an encoder that escapes non-ASCII writes them (`\ud83d\udc1f`, 12 bytes each),
 * is about 3.2 KB; 4 KiB leaves room for whitespace and stays under the firewall's 8 KB core body rule.
 */
export const MAX_BODY_BYTES = 4096;

/**
 * Largest body of `POST /inventory/changes`: 64 KiB, the most the production firewall inspects, so no part of a batch
 * passes unread. 100 of the longest changes fit while their references are ASCII or 2-byte characters (63 KB).
 */
export const MAX_BATCH_BODY_BYTES = 65_536;

/** What a route's body reader checks: its size limit, and the shape a missing body's message asks for. */
export interface JsonBodyRule {
  maxBytes: number;
  shape: string;
}

/** The PATCH's body rule, and the batch's (docs/api.md, "Limits"). */
const UPDATE_BODY: JsonBodyRule = { maxBytes: MAX_BODY_BYTES, shape: UPDATE_SHAPE };
export const BATCH_BODY: JsonBodyRule = { maxBytes: MAX_BATCH_BODY_BYTES, shape: CHANGES_SHAPE };

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/** The request body as text once present (400), at most `rule.maxBytes` (413) and declared JSON (415). */
export function readJsonBody(event: Pick<APIGatewayProxyEvent, 'body' | 'headers'>, rule = UPDATE_BODY): string {
  if (event.body === null || event.body === undefined || event.body.length === 0) {
    throw new ValidationError(`A request body is required: ${rule.shape} as application/json.`);
  }
  // The stage has no binary media types: API Gateway hands every body over as text, never base64.
  const bytes = Buffer.byteLength(event.body, 'utf8');
  if (bytes > rule.maxBytes) {
    throw new HttpError(
      'PAYLOAD_TOO_LARGE',
      `The request body is ${bytes} bytes; the limit is ${rule.maxBytes} bytes.`,
    );
  }
  const contentType = headerValue(event.headers, 'content-type');
  const mediaType = (mediaTypeOf(contentType) ?? '').slice(0, 100);
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    throw new HttpError(
      'UNSUPPORTED_MEDIA_TYPE',
      `The request body must be sent as Content-Type: application/json${contentType ? `, not ${mediaType || 'an empty type'}` : ''}.`,
    );
  }
  return event.body;
}
