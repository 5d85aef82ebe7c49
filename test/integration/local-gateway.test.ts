import { call, jsonHeaders, type TestResponse } from '../helpers/http';
import { putItems, snapshotTable, startTestStack, TEST_INVENTORY, type TestStack } from '../helpers/local-stack';

const UPDATE = '/inventory/{petId}';

describe('Local gateway: the /v1 API over HTTP, real handlers, real DynamoDB Local', () => {
  let stack: TestStack;
  const logLines: string[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ log: (line) => logLines.push(line) });
  });
  afterAll(() => stack.close());
  // Every test starts from the same inventory and an empty authorizer cache, whatever ran before it.
  beforeEach(async () => {
    stack.gateway.clearAuthorizerCache();
    await putItems(stack.client, stack.tables.inventory, TEST_INVENTORY);
  });

  const patch = (petId: string, body: string, headers = jsonHeaders(stack.authHeader)) =>
    call(stack.url, 'PATCH', `/inventory/${petId}`, { headers, body, route: UPDATE });
  const list = () => call(stack.url, 'GET', '/inventory', { headers: stack.authHeader, route: '/inventory' });

  describe('GET /inventory', () => {
    it('answers 200 with every entry as exactly {petId, quantity, status, version}, ordered by petId, int64 digits exact', async () => {
      const response = await list();
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(response.text).toBe(
        '[{"petId":-5,"quantity":4,"status":"available","version":1},' +
          '{"petId":1,"quantity":12,"status":"available","version":1},' +
          '{"petId":2,"quantity":3,"status":"pending","version":1},{"petId":10,"quantity":0,"status":"sold","version":1},' +
          '{"petId":9007199254740993,"quantity":7,"status":"available","version":1},' +
          '{"petId":9223372036854775807,"quantity":2,"status":"pending","version":1}]',
      );
    });
  });

  describe('PATCH /inventory/{petId}', () => {
    it('sets the quantity of the largest int64 pet, keeps its status, and the next list shows it', async () => {
      const response = await patch('9223372036854775807', '{"quantity":11}');
      expect(response.status).toBe(200);
      expect(response.text).toBe('{"petId":9223372036854775807,"quantity":11,"status":"pending","version":2}');
      expect((await list()).text).toContain(
        '{"petId":9223372036854775807,"quantity":11,"status":"pending","version":2}',
      );
    });

    it('keeps 9007199254740993 exact (a JavaScript number would round it to ...992)', async () => {
      const response = await patch('9007199254740993', '{"quantity":8}');
      expect(response.text).toBe('{"petId":9007199254740993,"quantity":8,"status":"available","version":2}');
    });

    it('treats leading zeros as the same pet', async () => {
      const response = await patch('0001', '{"quantity":13}');
      expect(response.text).toBe('{"petId":1,"quantity":13,"status":"available","version":2}');
    });

    it('answers 404 NOT_FOUND and creates nothing for a pet with no entry', async () => {
      const before = await snapshotTable(stack.client, stack.tables.inventory);
      const response = await patch('424242', '{"quantity":1}');
      expect(response.status).toBe(404);
      expect(response.json).toEqual({
        code: 'NOT_FOUND',
        message: 'No inventory entry exists for petId 424242.',
        status: 404,
      });
      expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
    });

    // One request per layer that refuses (petId, body rules, JSON, media type, size, order of checks): each rule
    // itself is tested in the unit test of its parser (test/unit/pet-id.test.ts, update.test.ts, json-body.test.ts).
    const badRequests: [string, string, string, Record<string, string> | undefined, number, string][] = [
      ['a non-integer petId', 'abc', '{"quantity":1}', undefined, 400, 'VALIDATION_FAILED'],
      ['an encoded slash in petId', '1%2F2', '{"quantity":1}', undefined, 400, 'VALIDATION_FAILED'],
      ['a negative quantity', '1', '{"quantity":-1}', undefined, 400, 'VALIDATION_FAILED'],
      ['malformed JSON', '1', '{"quantity":', undefined, 400, 'MALFORMED_JSON'],
      [
        'a body sent as text/plain',
        '1',
        '{"quantity":1}',
        { 'Content-Type': 'text/plain' },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      ['a body with no Content-Type', '1', '{"quantity":1}', {}, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      ['a body over 4 KiB', '1', `{"quantity":1${' '.repeat(4100)}}`, undefined, 413, 'PAYLOAD_TOO_LARGE'],
      ['a missing pet and a bad body (body first)', '424242', '{"quantity":-1}', undefined, 400, 'VALIDATION_FAILED'],
    ];

    it.each(badRequests)(
      'answers %s with its 4xx Error body and leaves the table byte-for-byte unchanged',
      async (_name, petId, body, headers, status, code) => {
        // Prepare
        const before = await snapshotTable(stack.client, stack.tables.inventory);
        // Act
        const response = await patch(petId, body, {
          ...stack.authHeader,
          ...(headers ?? { 'Content-Type': 'application/json' }),
        });
        // Assess
        expect(response.status).toBe(status);
        expect(response.json).toMatchObject({ code, status });
        expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
      },
    );

    it.each([
      ['255 characters past U+FFFF (1,020 bytes in UTF-8)', '\u{1F41F}'.repeat(255)],
      ['a literal U+FFFD, the replacement character', '\uFFFD'],
    ])('applies a PATCH whose reference is %s', async (_name, reference) => {
      // Act
      const response = await call(stack.url, 'PATCH', '/inventory/1', {
        headers: jsonHeaders(stack.authHeader),
        body: JSON.stringify({ quantity: 12, reason: 'correction', reference }),
        route: UPDATE,
      });
      // Assess
      expect(response.status).toBe(200);
    });

    it('answers 400 when no body is sent at all, whatever the headers, naming both bodies a PATCH may send', async () => {
      const response = await call(stack.url, 'PATCH', '/inventory/1', {
        headers: jsonHeaders(stack.authHeader),
        route: UPDATE,
      });
      expect(response.status).toBe(400);
      expect(response.json).toEqual({
        code: 'VALIDATION_FAILED',
        message: 'A request body is required: {"quantity": <integer>} or {"adjustBy": <integer>} as application/json.',
        status: 400,
      });
    });
  });

  describe('authentication', () => {
    // The token's shape and scheme, row by row: test/unit/api-keys.test.ts.
    const unauthorized: [string, Record<string, string>][] = [
      ['no Authorization header', {}],
      ['a malformed token', { Authorization: 'Bearer not-a-key' }],
      ['an unknown key', { Authorization: 'Bearer psk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
    ];

    it.each(unauthorized)('answers 401 UNAUTHORIZED with WWW-Authenticate: Bearer for %s', async (_name, headers) => {
      const response = await call(stack.url, 'GET', '/inventory', { headers, route: '/inventory' });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(response.json).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    });

    it('accepts the scheme in any case', async () => {
      const response = await call(stack.url, 'GET', '/inventory', {
        headers: { Authorization: `bEARER ${stack.key}` },
        route: '/inventory',
      });
      expect(response.status).toBe(200);
    });

    it('authenticates before anything else: 401, not 400, 404 or 405, without a key', async () => {
      const before = await snapshotTable(stack.client, stack.tables.inventory);
      const attempts: TestResponse[] = [
        await call(stack.url, 'PATCH', '/inventory/abc', {
          body: '{"quantity":-1}',
          headers: { 'Content-Type': 'application/json' },
        }),
        await call(stack.url, 'PATCH', '/inventory/424242', {
          body: '{"quantity":1}',
          headers: { 'Content-Type': 'application/json' },
        }),
        await call(stack.url, 'GET', '/no/such/route'),
        await call(stack.url, 'DELETE', '/inventory'),
      ];
      expect(attempts.map((r) => r.status)).toEqual([401, 401, 401, 401]);
      expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
    });
  });

  describe('routes', () => {
    it('answers 404 NOT_FOUND with an Error body for an unknown path under /v1', async () => {
      const response = await call(stack.url, 'GET', '/inventory/1/extra', { headers: stack.authHeader });
      expect(response.status).toBe(404);
      expect(response.json).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    });

    // API Gateway's own answer outside the stage (test/integration/local-gateway-semantics.test.ts cites the page).
    it('answers a path outside /v1 with 403 {"message":"Forbidden"}, which is not this API\'s', async () => {
      const response = await call(stack.url.replace(/\/v1$/, ''), 'GET', '/v2/inventory', {
        headers: stack.authHeader,
      });
      expect(response.status).toBe(403);
      expect(response.json).toEqual({ message: 'Forbidden' });
    });

    // The message is the one the stage's 405 mock renders (test/infra/api.test.ts): the method used, the resource path
    // and the methods it allows.
    it.each([
      ['DELETE', '/inventory', '/inventory', 'GET'],
      ['POST', '/inventory', '/inventory', 'GET'],
      ['DELETE', '/inventory/1', '/inventory/{petId}', 'GET, PATCH'],
      ['PUT', '/inventory/1', '/inventory/{petId}', 'GET, PATCH'],
      ['PATCH', '/store/orders', '/store/orders', 'GET'],
      // CORS off: no preflight mock, so OPTIONS is one more method of the resource's ANY mock.
      ['OPTIONS', '/inventory', '/inventory', 'GET'],
    ])(
      'answers %s %s with 405 METHOD_NOT_ALLOWED naming the method and the resource %s, and Allow: %s',
      async (method, path, resource, allow) => {
        const response = await call(stack.url, method, path, { headers: stack.authHeader });
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe(allow);
        expect(response.json).toEqual({
          code: 'METHOD_NOT_ALLOWED',
          message: `${method} is not allowed on ${resource}; allowed: ${allow}.`,
          status: 405,
        });
      },
    );

    it.each([
      ['/pets/{petId}', 'a', '/pets/1', expect.stringMatching(/^@\d+$/)],
      ['/store/orders', 'no', '/store/orders', null],
    ])(
      'answers GET %s with 501 NOT_IMPLEMENTED and %s Deprecation header',
      async (route, _which, path, deprecation) => {
        const response = await call(stack.url, 'GET', path, { headers: stack.authHeader, route });
        expect(response.status).toBe(501);
        expect(response.json).toMatchObject({ code: 'NOT_IMPLEMENTED', status: 501 });
        expect(response.headers.get('deprecation')).toEqual(deprecation);
      },
    );
  });

  describe('every response', () => {
    it('is application/json with Cache-Control: no-store and a request id, whoever produced it', async () => {
      const responses = [
        await list(),
        await patch('1', '{"quantity":1}'),
        await patch('1', 'nope'),
        await call(stack.url, 'GET', '/inventory'),
        await call(stack.url, 'GET', '/nowhere', { headers: stack.authHeader }),
        await call(stack.url, 'DELETE', '/inventory', { headers: stack.authHeader }),
        await call(stack.url, 'GET', '/store/orders', { headers: stack.authHeader, route: '/store/orders' }),
      ];
      for (const response of responses) {
        expect(response.headers.get('content-type')).toBe('application/json');
        expect(response.headers.get('cache-control')).toBe('no-store');
        expect(response.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
      }
    });

    it('is logged on one line: method, path, status, milliseconds', async () => {
      logLines.length = 0;
      await list();
      await call(stack.url, 'GET', '/inventory');
      expect(logLines).toHaveLength(2);
      expect(logLines[0]).toMatch(/^GET \/v1\/inventory 200 \d+\.\dms$/);
      expect(logLines[1]).toMatch(/^GET \/v1\/inventory 401 \d+\.\dms$/);
    });
  });
});
