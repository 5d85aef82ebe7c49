import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mediaTypeOf } from '../../service/integration-request';
import { ValidationError } from '../inventory/errors';
import { headerValue } from './headers';
import { HttpError } from './http-error';

/** Largest request body accepted, in bytes. A valid update is about 25 bytes; 1 KiB leaves room for whitespace. */
export const MAX_BODY_BYTES = 1024;

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/** The request body as text once present (400), at most MAX_BODY_BYTES (413) and declared JSON (415). */
export function readJsonBody(event: Pick<APIGatewayProxyEvent, 'body' | 'headers'>): string {
  if (event.body === null || event.body === undefined || event.body.length === 0) {
    throw new ValidationError(
      'A request body is required: {"quantity": <integer>} or {"adjustBy": <integer>} as application/json.',
    );
  }
  // The stage has no binary media types: API Gateway hands every body over as text, never base64.
  const bytes = Buffer.byteLength(event.body, 'utf8');
  if (bytes > MAX_BODY_BYTES) {
    throw new HttpError(
      'PAYLOAD_TOO_LARGE',
      `The request body is ${bytes} bytes; the limit is ${MAX_BODY_BYTES} bytes.`,
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
  // API Gateway hands a byte that is not UTF-8 over as U+FFFD, which no valid body (ASCII names, numbers) holds.
  if (event.body.includes(REPLACEMENT_CHARACTER)) {
    throw new ValidationError(
      'The request body is not valid UTF-8 (it holds a byte that is not UTF-8, or U+FFFD).',
      'MALFORMED_JSON',
    );
  }
  return event.body;
}

const REPLACEMENT_CHARACTER = '\uFFFD';
