import { pipeline } from 'node:stream';
import { constants, createGzip } from 'node:zlib';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { headerValue, headerValues } from './headers';
import { HttpError } from './http-error';
import type { StreamedApiResult } from './responses';

/** The codings a streamed body can be sent in: API Gateway does not compress a streamed response itself. */
export type ContentCoding = 'gzip' | 'identity';

// Not @middy/http-content-encoding: it pipes with `.pipe()`, which leaves a gzipped answer open when the list fails.

const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** Each coding's weight (RFC 9110 §12.4.2), first mention first; a member whose weight breaks the grammar is ignored. */
function weights(header: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const member of header.split(',')) {
    const [coding, ...parameters] = member.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='))?.slice(2);
    if (!coding || found.has(coding) || (q !== undefined && !QVALUE.test(q))) continue;
    found.set(coding, q === undefined ? 1 : Number(q));
  }
  return found;
}

/**
 * The coding for an Accept-Encoding (RFC 9110 §12.5.3): gzip when acceptable and weighed at least as identity,
 * identity otherwise (also with no header), `undefined` when neither is acceptable.
 */
function negotiateContentCoding(acceptEncoding: string | undefined): ContentCoding | undefined {
  if (acceptEncoding === undefined) return 'identity';
  const found = weights(acceptEncoding);
  const any = found.get('*');
  const gzip = found.get('gzip') ?? found.get('x-gzip') ?? any ?? 0;
  // Unnamed, identity is the fallback; `*` or its name can exclude it.
  const identity = found.get('identity') ?? any;
  if (gzip > 0 && (identity === undefined || gzip >= identity)) return 'gzip';
  if (identity === undefined || identity > 0) return 'identity';
  return undefined;
}

/** Every Accept-Encoding value of the request, joined as one list (a client may repeat the header). */
function acceptEncodingOf(event: APIGatewayProxyEvent): string | undefined {
  const values = headerValues(event.multiValueHeaders, 'Accept-Encoding');
  return values.length > 0 ? values.join(',') : headerValue(event.headers, 'Accept-Encoding');
}

/** Chooses the coding before the handler runs (406 when none is acceptable) and gzips a streamed success body. */
export function streamedContentEncoding(): MiddlewareObj<APIGatewayProxyEvent, StreamedApiResult> {
  const chosen = new WeakMap<object, ContentCoding>();
  return {
    before: function negotiateCoding(request) {
      const coding = negotiateContentCoding(acceptEncodingOf(request.event));
      if (coding === undefined) {
        throw new HttpError(
          'NOT_ACCEPTABLE',
          'This response is available as gzip or identity; the Accept-Encoding header refuses both.',
        );
      }
      chosen.set(request.event, coding);
    },
    after: function encodeBody(request) {
      const response = request.response;
      if (!response || typeof response.body === 'string') return;
      const headers = { ...response.headers };
      headers.Vary = headers.Vary ? `${headers.Vary}, Accept-Encoding` : 'Accept-Encoding';
      if (chosen.get(request.event) === 'gzip') {
        headers['Content-Encoding'] = 'gzip';
        // zlib's default level 6 (docs/performance.md); a sync flush per chunk sends each on at once, as identity would.
        response.body = pipeline(response.body, createGzip({ flush: constants.Z_SYNC_FLUSH }), () => undefined);
      }
      response.headers = headers;
    },
  };
}
