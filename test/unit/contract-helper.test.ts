import { assertMatchesContract } from '../helpers/contract';
import type { TestResponse } from '../helpers/http';

const JSON_HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };

/** A response as the HTTP test helper hands it over. */
function aResponse(status: number, text: string, headers: Record<string, string> = JSON_HEADERS): TestResponse {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers: new Headers(headers), text, json };
}

function anError(code: string, status: number): string {
  return JSON.stringify({ code, message: 'm', status });
}

/** The check of a `method` on `route` answered `status` with `text` and `headers`, for `expect` to run. */
function checking(
  method: string,
  route: string | undefined,
  status: number,
  text: string,
  headers?: Record<string, string>,
) {
  return () => assertMatchesContract(method, route, aResponse(status, text, headers));
}

describe('Helper: assertMatchesContract', () => {
  it('accepts the list with int64 ids written with all their digits', () => {
    // Prepare
    const text =
      '[{"petId":-9223372036854775808,"quantity":0,"status":"sold"},{"petId":9223372036854775807,"quantity":2147483647,"status":"pending"}]';
    // Act & Assess
    expect(
      checking('GET', '/inventory', 200, text, {
        ...JSON_HEADERS,
        Link: '</v1/inventory/changes?cursor=0>; rel="changes"',
      }),
    ).not.toThrow();
  });

  it.each([
    ['a petId beyond int64', '{"petId":9223372036854775808,"quantity":1,"status":"sold"}', /int64 range/],
    ['a petId written with an exponent', '{"petId":1e3,"quantity":1,"status":"sold"}', /integer literal/],
    ['a member the schema does not have', '{"petId":1,"quantity":1,"status":"sold","x":1}', /additional/],
  ])('refuses an update answer with %s', (_case, text, problem) => {
    // Act & Assess
    expect(checking('PATCH', '/inventory/{petId}', 200, text)).toThrow(problem);
  });

  it('refuses a status the operation does not document', () => {
    // Act & Assess
    expect(checking('GET', '/inventory', 404, anError('NOT_FOUND', 404))).toThrow(
      /status 404 is not documented for listInventory/,
    );
  });

  it('refuses an Error whose code belongs to another status, or whose status differs from HTTP', () => {
    // Act & Assess
    expect(checking('PATCH', '/inventory/{petId}', 404, anError('VALIDATION_FAILED', 404))).toThrow(/code/);
    expect(checking('PATCH', '/inventory/{petId}', 404, anError('NOT_FOUND', 400))).toThrow(/status/);
  });

  it('refuses a response without its documented headers', () => {
    // Act & Assess
    expect(checking('GET', '/inventory', 401, anError('UNAUTHORIZED', 401))).toThrow(
      /header WWW-Authenticate is required/,
    );
    expect(checking('GET', '/inventory', 200, '[]', { 'Content-Type': 'application/json' })).toThrow(
      /header Cache-Control is required/,
    );
  });

  it('accepts the documented headers with valid values, and refuses invalid ones', () => {
    // Prepare
    const deprecated = { ...JSON_HEADERS, Deprecation: '@1795305600' };
    // Act & Assess
    expect(checking('GET', '/pets/{petId}', 501, anError('NOT_IMPLEMENTED', 501), deprecated)).not.toThrow();
    expect(
      checking('GET', '/pets/{petId}', 501, anError('NOT_IMPLEMENTED', 501), { ...deprecated, Deprecation: 'true' }),
    ).toThrow(/Deprecation/);
    expect(
      checking('GET', '/inventory', 503, anError('SERVICE_UNAVAILABLE', 503), {
        ...JSON_HEADERS,
        'Retry-After': 'soon',
      }),
    ).toThrow(/Retry-After/);
  });

  it('refuses a body that is not the documented media type', () => {
    // Act & Assess
    expect(checking('GET', '/inventory', 200, '[]', { 'Cache-Control': 'no-store' })).toThrow(/Content-Type/);
  });

  it('expects a method the path does not document to be refused with 405 and the documented Allow', () => {
    // Prepare
    const refused = anError('METHOD_NOT_ALLOWED', 405);
    // Act & Assess
    expect(checking('DELETE', '/inventory', 405, refused, { ...JSON_HEADERS, Allow: 'GET' })).not.toThrow();
    expect(checking('DELETE', '/inventory', 405, refused, { ...JSON_HEADERS, Allow: 'GET, DELETE' })).toThrow(/Allow/);
    expect(checking('DELETE', '/inventory', 200, '[]')).toThrow(/not documented/);
  });

  it('checks only the Error shape for paths the contract does not describe', () => {
    // Act & Assess
    expect(checking('GET', undefined, 404, anError('NOT_FOUND', 404))).not.toThrow();
    expect(checking('GET', undefined, 200, '<html>')).not.toThrow();
    expect(checking('GET', undefined, 404, '{"error":"x"}')).toThrow(/Error body/);
    expect(checking('GET', undefined, 404, anError('NOT_FOUND', 400))).toThrow(/differs from HTTP 404/);
  });

  it('refuses a route the contract does not have, so a test cannot check against nothing', () => {
    // Act & Assess
    expect(checking('GET', '/pets', 200, '[]')).toThrow(/not a path of openapi.yaml/);
  });
});
