import { CORS_EXPOSED_HEADERS, CORS_PREFLIGHT } from '../../service/gateway-responses';
import { loadContract, resolveRef } from '../helpers/contract';

type Node = Record<string, unknown>;

const resolve = (node: unknown) => resolveRef(node as Node);
const operations = Object.values(loadContract().paths as Record<string, Record<string, Node>>).flatMap((item) =>
  Object.values(item).filter((operation) => typeof operation === 'object' && 'responses' in operation),
);

/** Every response header the contract documents, on any answer of any operation. */
const documentedResponseHeaders = new Set(
  operations.flatMap((operation) =>
    Object.values(operation.responses as Node).flatMap((response) => Object.keys(resolve(response).headers ?? {})),
  ),
);

/** Every request header the contract documents: header parameters, the bearer key, and a JSON body's type. */
const documentedRequestHeaders = new Set([
  'Authorization',
  'Content-Type',
  ...operations.flatMap((operation) =>
    ((operation.parameters as unknown[] | undefined) ?? [])
      .map(resolve)
      .filter((parameter) => parameter.in === 'header')
      .map((parameter) => parameter.name as string),
  ),
]);

const lower = (names: Iterable<string>) => [...names].map((name) => name.toLowerCase()).sort();

/**
 * What a browser script may read and send across origins, by the Fetch Standard (https://fetch.spec.whatwg.org/):
 * a response header that is not a "CORS-safelisted response-header name" is hidden unless
 * Access-Control-Expose-Headers names it; a request header that is not a "CORS-safelisted request-header" (and not
 * a "forbidden request-header" the browser sets itself) makes a preflight, which must allow it.
 */
describe('CORS against the contract: a browser can send and read everything openapi.yaml documents', () => {
  const SAFELISTED_RESPONSE = [
    'cache-control',
    'content-language',
    'content-length',
    'content-type',
    'expires',
    'last-modified',
    'pragma',
  ];
  // Read by the browser, not by scripts: it decodes the body itself, and Vary is for caches.
  const NOT_FOR_SCRIPTS = ['content-encoding', 'vary'];
  const FORBIDDEN_REQUEST = ['accept-encoding'];

  it('exposes every documented response header a script could not read otherwise, and the request id', () => {
    const needed = lower(documentedResponseHeaders).filter(
      (name) => !SAFELISTED_RESPONSE.includes(name) && !NOT_FOR_SCRIPTS.includes(name),
    );
    expect(needed).toEqual(expect.arrayContaining(['idempotent-replayed', 'link', 'retry-after', 'www-authenticate']));
    expect(lower(CORS_EXPOSED_HEADERS)).toEqual(lower([...needed, 'x-amzn-RequestId']));
  });

  it('allows in the preflight every documented request header a browser does not set itself', () => {
    const needed = lower(documentedRequestHeaders).filter((name) => !FORBIDDEN_REQUEST.includes(name));
    expect(needed).toEqual(['authorization', 'content-type', 'idempotency-key']);
    expect(lower(CORS_PREFLIGHT.allowHeaders)).toEqual(needed);
  });
});
