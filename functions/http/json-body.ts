import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mediaTypeOf } from '../../service/integration-request';
import { ValidationError } from '../inventory/errors';
import { headerValue } from './headers';
import { HttpError } from './http-error';

/** Largest request body accepted, in bytes. A valid update is about 25 bytes; 1 KiB leaves room for whitespace. */
export const MAX_BODY_BYTES = 1024;

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/**
 * Returns the request body as text after the checks every JSON body gets: present (else 400), at most
 * MAX_BODY_BYTES (else 413 PAYLOAD_TOO_LARGE), and declared as JSON by Content-Type (else 415 UNSUPPORTED_MEDIA_TYPE).
 */
export function readJsonBody(event: Pick<APIGatewayProxyEvent, 'body' | 'headers' | 'isBase64Encoded'>): string {
  if (event.body === null || event.body === undefined || event.body.length === 0) {
    throw new ValidationError(
      'A request body is required: {"quantity": <integer>} or {"adjustBy": <integer>} as application/json.',
    );
  }
  const bytes = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (bytes.length > MAX_BODY_BYTES) {
    throw new HttpError(
      'PAYLOAD_TOO_LARGE',
      `The request body is ${bytes.length} bytes; the limit is ${MAX_BODY_BYTES} bytes.`,
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
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new ValidationError('The request body is not valid UTF-8.', 'MALFORMED_JSON');
  }
  // The stage has no binary media types, so API Gateway hands a JSON body over as text, and a byte that is not
  // UTF-8 reaches the function as U+FFFD (the local gateway decodes alike). No valid body has that character (its
  // members are ASCII names and numbers), so it stands for the byte it replaced.
  if (text.includes(REPLACEMENT_CHARACTER)) {
    throw new ValidationError(
      'The request body is not valid UTF-8 (it holds a byte that is not UTF-8, or U+FFFD).',
      'MALFORMED_JSON',
    );
  }
  return text;
}

const REPLACEMENT_CHARACTER = '\uFFFD';
