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

/** One `coding;q=value` member of Accept-Encoding; the weight in thousandths (RFC 9110 §12.4.2). */
interface Preference {
  coding: string;
  weight: number;
}

const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

function parsePreferences(header: string): Preference[] {
  const preferences: Preference[] = [];
  for (const member of header.split(',')) {
    const [name, ...parameters] = member.split(';').map((part) => part.trim());
    if (!name) continue;
    let weight = 1000;
    for (const parameter of parameters) {
      const [key, value] = parameter.split('=').map((part) => part.trim());
      if (key?.toLowerCase() !== 'q') continue;
      // A malformed weight makes the member meaningless: it is ignored rather than guessed at.
      weight = value !== undefined && QVALUE.test(value) ? Math.round(Number(value) * 1000) : -1;
    }
    if (weight >= 0) preferences.push({ coding: name.toLowerCase(), weight });
  }
  return preferences;
}

/**
 * The coding for an Accept-Encoding (RFC 9110 §12.5.3): gzip when acceptable and weighed at least as identity,
 * identity otherwise (also with no header), `undefined` when neither is acceptable.
 */
export function negotiateContentCoding(acceptEncoding: string | undefined): ContentCoding | undefined {
  if (acceptEncoding === undefined) return 'identity';
  const preferences = parsePreferences(acceptEncoding);
  const weightOf = (...codings: string[]) =>
    preferences.find((p) => codings.includes(p.coding))?.weight ?? preferences.find((p) => p.coding === '*')?.weight;
  const gzip = weightOf('gzip', 'x-gzip') ?? 0;
  // identity is acceptable unless excluded by name or by `*` (RFC 9110 §12.5.3); unnamed, it is the fallback.
  const identity = weightOf('identity');
  if (gzip > 0 && (identity === undefined || gzip >= identity)) return 'gzip';
  if (identity === undefined || identity > 0) return 'identity';
  return undefined;
}

/** Every Accept-Encoding value of the request, joined as one list (a client may repeat the header). */
function acceptEncodingOf(event: APIGatewayProxyEvent): string | undefined {
  const values = headerValues(event.multiValueHeaders, 'Accept-Encoding');
  return values.length > 0 ? values.join(',') : headerValue(event.headers, 'Accept-Encoding');
}

/** gzip level of streamed bodies: zlib's default (6), chosen against levels 1 and 9 in docs/performance.md. */
const GZIP_LEVEL = constants.Z_DEFAULT_COMPRESSION;

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
        // A sync flush per chunk sends each on at once, as identity would; errors reach streaming.ts's pipeline.
        response.body = pipeline(
          response.body,
          createGzip({ level: GZIP_LEVEL, flush: constants.Z_SYNC_FLUSH }),
          () => undefined,
        );
      }
      response.headers = headers;
    },
  };
}
