import { corsPreflightHeaders } from '../../service/gateway-responses';
import { call, jsonHeaders } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/local-stack';
import { socketExchange } from '../helpers/raw-http';

// Which origin, header and preflight each answer allows: test/unit/cors.test.ts and cors-contract.test.ts.
describe('CORS: a stage that allows an origin, through the local gateway', () => {
  const ORIGIN = 'https://staff.example.com';
  let stack: TestStack;
  const saved = process.env.CORS_ALLOWED_ORIGINS;

  beforeAll(async () => {
    // The handlers read it when first loaded, as a Lambda instance reads its environment.
    process.env.CORS_ALLOWED_ORIGINS = ORIGIN;
    stack = await startTestStack();
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.CORS_ALLOWED_ORIGINS;
    else process.env.CORS_ALLOWED_ORIGINS = saved;
    await stack.close();
  });

  /** A browser's preflight of a PATCH from the allowed origin that sends `requestHeaders`. */
  const preflight = (path: string, requestHeaders: string) =>
    socketExchange(
      stack.url,
      `OPTIONS ${path} HTTP/1.1\r\nHost: h\r\nOrigin: ${ORIGIN}\r\nAccess-Control-Request-Method: PATCH\r\n` +
        `Access-Control-Request-Headers: ${requestHeaders}\r\nConnection: close\r\n\r\n`,
    );

  it('lets the allowed origin read successful answers and error answers', async () => {
    const listed = await call(stack.url, 'GET', '/inventory', {
      headers: { ...stack.authHeader, Origin: ORIGIN },
      route: '/inventory',
    });
    const missing = await call(stack.url, 'PATCH', '/inventory/424242', {
      headers: { ...jsonHeaders(stack.authHeader), Origin: ORIGIN },
      body: '{"quantity":1}',
      route: '/inventory/{petId}',
    });
    for (const response of [listed, missing]) {
      expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    }
    // The list's body also varies with Accept-Encoding (compressed in the function).
    expect(listed.headers.get('vary')).toBe('Accept-Encoding, Origin');
    expect(missing.headers.get('vary')).toBe('Origin');
    expect([listed.status, missing.status]).toEqual([200, 404]);
  });

  // "CORS for REST APIs in API Gateway" (https://docs.aws.amazon.com/apigateway/latest/developerguide/how-to-cors.html):
  // the stage's preflight is an OPTIONS method with a MOCK integration and no authorizer, on every resource. The local
  // gateway reads the origins from CORS_ALLOWED_ORIGINS, as the functions do.
  it.each(['/v1/inventory', '/v1/inventory/7', '/v1/anything/else'])(
    'answers a preflight OPTIONS %s with 204 and the stage preflight headers, without a key',
    async (path) => {
      const response = await preflight(path, 'authorization,content-type');
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      for (const [name, value] of Object.entries(corsPreflightHeaders([ORIGIN], ORIGIN))) {
        expect(response.headers[name.toLowerCase()]).toBe(value);
      }
      expect(response.headers['x-amzn-requestid']).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  // Fetch Standard (https://fetch.spec.whatwg.org/, "CORS-safelisted response-header name"): a script reads any
  // other header only if Access-Control-Expose-Headers names it.
  it.each([
    ['a 401 from the authorizer', 'GET', '/inventory', false, 401, 'www-authenticate'],
    ['a 404 for an unknown path (the stage: a mock)', 'GET', '/no-such-route', true, 404, 'x-amzn-requestid'],
    ['a 405 for another method (the stage: a mock)', 'DELETE', '/inventory', true, 405, 'allow'],
    ["a page of the list with a next page's Link", 'GET', '/inventory?limit=1', true, 200, 'link'],
  ] as const)(
    'lets the allowed origin read %s and its headers',
    async (_what, method, path, withKey, status, header) => {
      // Act
      const response = await call(stack.url, method, path, {
        headers: { ...(withKey ? stack.authHeader : {}), Origin: ORIGIN },
        ...(path.startsWith('/inventory') ? { route: '/inventory' } : {}),
      });
      // Assess
      expect(response.status).toBe(status);
      expect(response.headers.get(header)).not.toBeNull();
      expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(response.headers.get('vary')).toMatch(/Origin/);
      const exposed = (response.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/,\s*/);
      expect(exposed).toContain(header);
    },
  );
});
