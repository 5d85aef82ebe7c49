import fc from 'fast-check';
import { ApiKeyAdminTable } from '../../cli/api-key-admin-table';
import type { InventoryItem } from '../../functions/inventory/types';
import { inventoryAttributes, LAST_CHANGE } from '../../functions/store/inventory-row';
import {
  BODY_OVER_GATEWAY_LIMIT,
  OUTSIDE_THE_STAGE,
  type UnshapedGatewayAnswer,
} from '../../service/gateway-responses';
import { withinContract } from '../helpers/contract';
import { putItems, snapshotTable, startTestStack, type TestStack } from '../helpers/local-stack';
import { closeRawAgent, type RawResponse, rawHttp, rawRequest, socketExchange } from '../helpers/raw-http';

/** How many generated requests each property sends (FUZZ_RUNS=5000 for a deeper run by hand). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);
/** How many generated batches (`POST /inventory/changes`) and hand-built raw requests their properties send. */
const FEWER_RUNS = Math.ceil(RUNS / 2);

/** Names every JavaScript object inherits: a gateway that builds its event on plain objects trips on them. */
const INHERITED_NAMES = [
  'constructor',
  'toString',
  '__proto__',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupSetter__',
] as const;

const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const INVENTORY: InventoryItem[] = Array.from({ length: 12 }, (_, i) => ({
  petId: i === 11 ? '9223372036854775807' : String(i + 1),
  quantity: i,
  status: (['available', 'pending', 'sold'] as const)[i % 3] ?? 'available',
}));

const STACK_TRACE_OR_SDK = /\bat [\w.<>]+ \(|Exception|\$metadata|node_modules|ECONNREFUSED|TypeError|SyntaxError/;

/**
 * API Gateway's own answers that no gateway response can shape (service/gateway-responses.ts): the only answers
 * without the Error body, each allowed only where it belongs (outside the stage; a request over a size limit).
 */
function unshaped(response: { status: number; text: string }, target: string): UnshapedGatewayAnswer | undefined {
  const found = [OUTSIDE_THE_STAGE, BODY_OVER_GATEWAY_LIMIT].find(
    (answer) => answer.status === response.status && answer.body === response.text,
  );
  if (found === OUTSIDE_THE_STAGE) expect(withinContract(target.split('?')[0] ?? '')).toBe(false);
  return found;
}

describe('Reliability: generated requests against the local gateway', () => {
  let stack: TestStack;
  let revokedKey: string;
  /** The model: the table as each test starts it, changed only by 200 answers to PATCH and to the batch. */
  let model = new Map<string, InventoryItem>();

  beforeAll(async () => {
    stack = await startTestStack({ inventory: INVENTORY });
    const revoked = await stack.createKey('revoked');
    await new ApiKeyAdminTable({ client: stack.client, tableName: stack.tables.apiKeys }).revoke(revoked.keyId);
    revokedKey = revoked.key;
  });
  afterAll(async () => {
    closeRawAgent();
    await stack.close();
  });
  // Each property starts from the same stock and ends checking the table against what it confirmed.
  beforeEach(async () => {
    await putItems(stack.client, stack.tables.inventory, INVENTORY);
    model = new Map(INVENTORY.map((item) => [item.petId, { ...item }]));
  });

  /** The table changed only by the updates the test's answers confirmed, byte for byte. */
  async function expectOnlyConfirmedChanges(): Promise<void> {
    // Each confirmed update also signs its entry (lastChange, read by the history): the stock is compared.
    const after = await snapshotTable(stack.client, stack.tables.inventory, { omit: [LAST_CHANGE] });
    const expected = [...model.values()]
      .map((item) => JSON.stringify(Object.entries(inventoryAttributes(item)).sort(([a], [b]) => a.localeCompare(b))))
      .sort()
      .join('\n');
    expect(after).toBe(expected);
  }

  const existingId = fc.constantFrom(...INVENTORY.map((item) => item.petId));
  const petIdSegment = fc.oneof(
    existingId,
    fc.bigInt().map(String),
    fc.constantFrom(
      '00001',
      '-0',
      '+1',
      '1e3',
      '1.0',
      '%201',
      '1%20',
      '%31',
      '1%2F2',
      '%2e%2e',
      '..',
      encodeURIComponent('١٢'),
      encodeURIComponent('１'),
      '0x1F',
      '9'.repeat(40),
    ),
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
  );
  const path = fc.oneof(
    fc.constant('/v1/inventory'),
    petIdSegment.map((id) => `/v1/inventory/${id}`),
    petIdSegment.map((id) => `/v1/inventory/${id}/history`),
    petIdSegment.map((id) => `/v1/pets/${id}`),
    fc.constantFrom(
      '/v1/store/orders',
      '/v1',
      '/v1/',
      '/',
      '/v2/inventory',
      '/v1/inventory/',
      '/v1/inventory/changes',
      '/v1/inventory/changes/',
      '/v1/inventory/1/2',
      '/v1//inventory',
      '/v1/INVENTORY',
    ),
    fc
      .array(fc.string({ maxLength: 8 }).map(encodeURIComponent), { maxLength: 4 })
      .map((parts) => `/v1/${parts.join('/')}`),
  );
  const printable = fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 60,
  });
  const inheritedName = fc.constantFrom(...INHERITED_NAMES);
  const query = fc.option(
    fc
      .array(
        fc.tuple(
          fc.oneof(inheritedName, fc.constantFrom('limit', 'after', 'cursor'), fc.string({ maxLength: 8 })),
          fc.oneof(fc.string({ maxLength: 8 }), fc.integer({ min: -2, max: 1002 }).map(String)),
        ),
        {
          minLength: 1,
          maxLength: 4,
        },
      )
      .map((pairs) => `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`),
    { nil: '' },
  );
  /** Extra headers, named like inherited members, set on an object without a prototype so `__proto__` is a name. */
  const extraHeaders = fc
    .array(
      fc.tuple(
        inheritedName,
        printable.map((value) => value.trim() || 'x'),
      ),
      { maxLength: 3 },
    )
    .map((pairs) => {
      const headers = Object.create(null) as Record<string, string>;
      for (const [name, value] of pairs) headers[name] = value;
      return headers;
    });
  const body = fc.oneof(
    fc.integer({ min: 0, max: 2147483647 }).map((q) => `{"quantity":${q}}`),
    fc.integer().map((q) => `{"quantity":${q}}`),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.constantFrom(
      '',
      '{',
      'null',
      '{"quantity":1,"quantity":2}',
      '{"__proto__":{"quantity":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"quantity":1e2}',
      '{"quantity":"7"}',
      `{"quantity":${'9'.repeat(400)}}`,
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
      `{"quantity":1,"pad":"${'x'.repeat(3000)}"}`,
    ),
    printable,
  );

  function authorization(key: string, revoked: string) {
    return fc.oneof(
      { arbitrary: fc.constant({ header: `Bearer ${key}`, valid: true }), weight: 6 },
      fc.constant({ header: `bearer ${key}`, valid: true }),
      fc.constant({ header: undefined, valid: false }),
      fc.constant({ header: `Bearer ${revoked}`, valid: false }),
      fc.constant({ header: `Basic ${key}`, valid: false }),
      printable.map((s) => ({ header: `Bearer ${s}`, valid: false })),
      printable.map((s) => ({ header: s, valid: false })),
    );
  }

  /** What every answer holds: no 5xx but 501, a request id, nothing internal. */
  function checkEveryAnswer(response: RawResponse): void {
    // 501 is the documented answer of the two undefined routes; any other 5xx is a defect.
    if (response.status !== 501) expect(response.status).toBeLessThan(500);
    expect(response.headers['x-amzn-requestid']).toMatch(REQUEST_ID);
    expect(response.text).not.toMatch(STACK_TRACE_OR_SDK);
  }

  /** The Error body, and nothing else, with the answer's status. */
  function expectErrorBody(response: RawResponse): void {
    const error = JSON.parse(response.text) as Record<string, unknown>;
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'status']);
    expect(error.status).toBe(response.status);
  }

  async function sendAndCheck(
    method: string,
    requestPath: string,
    auth: { header?: string; valid: boolean },
    contentType?: string,
    requestBody?: string,
    extra: Record<string, string> = {},
  ) {
    // Act
    const headers = Object.assign(Object.create(null) as Record<string, string>, extra);
    if (auth.header !== undefined) headers.Authorization = auth.header;
    if (contentType !== undefined) headers['Content-Type'] = contentType;
    const response = await rawRequest(stack.url, { method, path: requestPath, headers, body: requestBody });
    // Assess
    checkEveryAnswer(response);
    if (unshaped(response, requestPath)) return;
    expect(response.headers['cache-control']).toBe('no-store');
    if (requestPath.startsWith('/v1') && !auth.valid) expect(response.status).toBe(401);
    if (response.status >= 400) expectErrorBody(response);
    if (response.status === 200) confirm(method, response.text);
  }

  /** Applies to the model what a 200 to a PATCH or a batch says is stored now. */
  function confirm(method: string, text: string): void {
    if (method !== 'PATCH' && method !== 'POST') return;
    const answer = JSON.parse(text.replace(/"petId":(-?\d+)/g, '"petId":"$1"')) as
      | InventoryItem
      | { items: InventoryItem[] };
    for (const updated of 'items' in answer ? answer.items : [answer]) {
      const entry = model.get(updated.petId);
      expect(entry).toBeDefined();
      if (entry) Object.assign(entry, { quantity: updated.quantity, version: updated.version });
    }
  }

  const contentType = fc.option(
    fc.oneof(
      fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/xml', ''),
      printable,
    ),
    { nil: undefined },
  );

  it(`answers ${RUNS} generated requests (any method, path, query and header names, key, media type, body) with no 5xx but the documented 501, a request id, and an Error body on every 4xx`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'PATCH', 'POST', 'PUT', 'DELETE', 'OPTIONS'),
        path,
        query,
        authorization(stack.key, revokedKey),
        contentType,
        fc.option(body, { nil: undefined }),
        extraHeaders,
        (method, requestPath, search, auth, type, requestBody, extra) =>
          sendAndCheck(method, `${requestPath}${search}`, auth, type, requestBody, extra),
      ),
      { numRuns: RUNS },
    );
    await expectOnlyConfirmedChanges();
  });

  it(`answers ${RUNS} generated authenticated updates (any petId, media type, body) with 200 or a 4xx Error body`, async () => {
    await fc.assert(
      fc.asyncProperty(
        petIdSegment,
        fc.oneof(
          { arbitrary: fc.constant('application/json'), weight: 4 },
          contentType.map((c) => c ?? 'application/json'),
        ),
        fc.option(body, { nil: undefined, freq: 20 }),
        (id, type, requestBody) =>
          sendAndCheck(
            'PATCH',
            `/v1/inventory/${id}`,
            { header: `Bearer ${stack.key}`, valid: true },
            type,
            requestBody,
          ),
      ),
      { numRuns: RUNS },
    );
    await expectOnlyConfirmedChanges();
  });

  /** One change of a batch: mostly valid, sometimes breaking a rule (unknown pet, bad reason, a member too many). */
  const batchChange = fc.oneof(
    {
      arbitrary: fc
        .tuple(existingId, fc.integer({ min: -3, max: 3 }), fc.constantFrom('', ',"reason":"received"'))
        .map(([id, delta, note]) => `{"petId":${id},"adjustBy":${delta}${note}}`),
      weight: 6,
    },
    existingId.map((id) => `{"petId":${id},"quantity":5,"expectedQuantity":5,"reference":"count 1"}`),
    fc.bigInt().map((id) => `{"petId":${id},"quantity":1}`),
    fc.constantFrom(
      '{"petId":1,"adjustBy":1,"reason":"arrived"}',
      '{"petId":1,"adjustBy":1,"reference":""}',
      '{"petId":"1","adjustBy":1}',
      '{"petId":1.0,"quantity":1}',
      '{"petId":1,"adjustBy":1,"adjustBy":2}',
      '{"petId":1}',
      'null',
    ),
  );
  const batchBody = fc.oneof(
    {
      arbitrary: fc.array(batchChange, { maxLength: 6 }).map((changes) => `{"changes":[${changes.join(',')}]}`),
      weight: 8,
    },
    body,
  );

  it(`answers ${FEWER_RUNS} generated authenticated batches with 200 or a 4xx Error body, applying only what it confirms`, async () => {
    await fc.assert(
      fc.asyncProperty(batchBody, (requestBody) =>
        sendAndCheck(
          'POST',
          '/v1/inventory/changes',
          { header: `Bearer ${stack.key}`, valid: true },
          'application/json',
          requestBody,
        ),
      ),
      { numRuns: FEWER_RUNS },
    );
    await expectOnlyConfirmedChanges();
  });

  const rawTarget = fc.oneof(
    path,
    fc.constantFrom(
      '//[',
      '/v1/[',
      '/v1/%',
      '/v1/%zz',
      '/v1/inventory/%ff',
      '*',
      'http://h/v1/inventory',
      '/v1/inventory?constructor=1&__proto__=2',
      '/v1/inventory/1?toString=&valueOf',
      `/v1/${'a'.repeat(3000)}`,
    ),
  );
  // Framing Node's HTTP parser refuses never reaches the gateway: Node answers it with its own 400.
  const defect = fc.constantFrom('none', 'inherited header names');

  /** One hand-built request: a valid one, or one with what a client seldom sends. */
  function buildRaw(
    method: string,
    target: string,
    auth: { header?: string },
    requestBody: string,
    flaw: string,
  ): string {
    const headers: [string, string][] = [['Host', 'h']];
    if (auth.header !== undefined) headers.push(['Authorization', auth.header]);
    headers.push(['Content-Type', 'application/json'], ['Content-Length', String(Buffer.byteLength(requestBody))]);
    headers.push(['Connection', 'close']);
    if (flaw === 'inherited header names') for (const name of INHERITED_NAMES) headers.push([name, 'x']);
    return rawHttp(`${method} ${target} HTTP/1.1`, headers, requestBody);
  }

  it(`answers ${FEWER_RUNS} hand-built raw requests (inherited names, odd targets) with no 500, a request id and an Error body on every 4xx`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'PATCH', 'POST', 'DELETE', 'OPTIONS'),
        rawTarget,
        authorization(stack.key, revokedKey),
        fc.option(body, { nil: '' }),
        defect,
        async (method, target, auth, requestBody, flaw) => {
          // Act
          const response = await socketExchange(stack.url, buildRaw(method, target, auth, requestBody, flaw));
          // Assess
          checkEveryAnswer(response);
          if (response.status >= 400 && !unshaped(response, target)) expectErrorBody(response);
          if (response.status === 200) confirm(method, response.text);
        },
      ),
      { numRuns: FEWER_RUNS },
    );
    await expectOnlyConfirmedChanges();
  });
});
