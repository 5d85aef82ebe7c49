import { deprecationHeaders } from '../../functions/handlers/get-pet';
import { cursorOf, DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT } from '../../functions/handlers/list-inventory-history';
import { MAX_BATCH_BODY_BYTES, MAX_BODY_BYTES } from '../../functions/http/json-body';
import { changesLink, nextPageLink } from '../../functions/http/responses';
import { ValidationError } from '../../functions/inventory/errors';
import { DEFAULT_FEED_LIMIT, encodeFeedCursor, MAX_FEED_LIMIT } from '../../functions/inventory/feed-query';
import { MAX_LIST_LIMIT } from '../../functions/inventory/list-query';
import { CHANGE_REASONS, INVENTORY_ITEM_FIELDS, MAX_QUANTITY, PET_STATUSES } from '../../functions/inventory/types';
import { MAX_CHANGES, MAX_REFERENCE_CHARACTERS, parseInventoryChanges } from '../../functions/inventory/update';
import { historySortKey } from '../../functions/store/history-table';
import { ERROR_CODES, RETRY_AFTER_SECONDS } from '../../service/error-codes';
import { GATEWAY_RESPONSE_TYPES, gatewayResponse } from '../../service/gateway-responses';
import { INVENTORY_LIST_INDEX, INVENTORY_TABLE_KEY } from '../../service/names';
import { API_STAGE_NAME, allowedMethods, ROUTES } from '../../service/routes';
import { documentedMethods, loadContract, resolveRef } from '../helpers/contract';

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  tags?: string[];
  deprecated?: boolean;
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
  requestBody?: { description?: string };
  'x-stability'?: string;
}

interface Schema {
  type?: string;
  enum?: string[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
  pattern?: string;
  format?: string;
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean;
}

interface Response {
  headers?: Record<string, { required?: boolean; schema?: Schema }>;
  content?: Record<string, { schema: Schema }>;
}

const doc = loadContract();
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** Every operation of the contract, with its method and path. */
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  METHODS.filter((method) => method in item).map((method) => ({
    path,
    method: method.toUpperCase(),
    operation: item[method] as Operation,
  })),
);

const operationWithId = (id: string) => operations.find((o) => o.operation.operationId === id)?.operation as Operation;
const queryParameters = (operation: Operation) =>
  Object.fromEntries((operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => [p.name, p] as const));

function schema(name: string): Schema {
  return doc.components.schemas?.[name] as Schema;
}

/** A documented response with its header references resolved. */
function response(operation: Operation, status: string): Response {
  const found = operation.responses[status];
  if (!found) throw new Error(`${operation.operationId} documents no ${status}`);
  const resolved = resolveRef(found as Response);
  const headers = Object.fromEntries(
    Object.entries(resolved.headers ?? {}).map(([name, header]) => [name, resolveRef(header)]),
  );
  return { ...resolved, headers };
}

/** The code values and the status a response's Error schema allows. */
function errorConstraints(body: Schema): { codes: string[]; status: unknown } {
  const resolved = resolveRef(body);
  const parts = [resolved, ...(resolved.allOf ?? []).map((part) => resolveRef(part))];
  let codes = schema('Error').properties?.code?.enum ?? [];
  let status: unknown;
  for (const part of parts) {
    const code = part.properties?.code;
    if (code?.enum) codes = codes.filter((value) => code.enum?.includes(value));
    if (code?.const !== undefined) codes = codes.filter((value) => value === code.const);
    if (part.properties?.status?.const !== undefined) status = part.properties.status.const;
  }
  return { codes, status };
}

describe('Contract: openapi.yaml and the code agree', () => {
  it('is OpenAPI 3.1 at version 1.0.0 with production, staging and local servers ending in /v1', () => {
    // Assess
    expect(doc.openapi).toBe('3.1.0');
    expect((doc.info as { version: string }).version).toBe('1.0.0');
    const servers = doc.servers as { url: string; description: string }[];
    expect(servers.map((server) => server.description.split(' ')[0])).toEqual(['Production', 'Staging', 'Local']);
    for (const server of servers) expect(server.url.endsWith(`/${API_STAGE_NAME}`)).toBe(true);
  });

  it('lists the Error codes of ERROR_CODES, no more and no fewer', () => {
    // Assess
    expect([...(schema('Error').properties?.code?.enum ?? [])].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('binds each documented Error response to the codes of its status only', () => {
    for (const { operation } of operations) {
      for (const [status, found] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const body = resolveRef(found as Response).content?.['application/json']?.schema;
        if (!body) throw new Error(`${operation.operationId} ${status} has no JSON body`);
        // Act
        const { codes, status: constStatus } = errorConstraints(body);
        // Assess
        expect({ operation: operation.operationId, status: constStatus }).toEqual({
          operation: operation.operationId,
          status: Number(status),
        });
        expect(codes.length).toBeGreaterThan(0);
        for (const code of codes) {
          expect({ code, status: ERROR_CODES[code as keyof typeof ERROR_CODES] }).toEqual({
            code,
            status: Number(status),
          });
        }
      }
    }
  });

  it('has every route of ROUTES with the same operationId, method and deprecated flag, and nothing else', () => {
    // Prepare
    const fromCode = ROUTES.map((route) => ({
      path: route.path,
      method: route.method,
      operationId: route.operationId,
      deprecated: route.deprecated === true,
    }));
    // Act
    const fromContract = operations.map(({ path, method, operation }) => ({
      path,
      method,
      operationId: operation.operationId,
      deprecated: operation.deprecated === true,
    }));
    // Assess
    const byId = (a: { operationId: string }, b: { operationId: string }) => a.operationId.localeCompare(b.operationId);
    expect(fromContract.sort(byId)).toEqual(fromCode.sort(byId));
    for (const route of ROUTES) expect(documentedMethods(route.path)).toEqual(allowedMethods(route.path));
  });

  it('puts every operation under the inventory tag and behind bearer authentication', () => {
    // Assess
    expect((doc.components.securitySchemes as Record<string, unknown>).bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    for (const { operation } of operations) {
      expect(operation.tags).toEqual(['inventory']);
      expect(operation.security).toEqual([{ bearerAuth: [] }]);
    }
  });

  it('marks the update experimental and documents 200 on the two inventory operations', () => {
    // Assess
    expect(operationWithId('updateInventory')['x-stability']).toBe('experimental');
    for (const route of ROUTES.filter((r) => r.access.length > 0)) {
      expect(Object.keys(operationWithId(route.operationId).responses)).toContain('200');
    }
  });

  it('documents the 501 of the unimplemented routes, with Deprecation and Sunset on the deprecated one', () => {
    for (const route of ROUTES.filter((r) => r.access.length === 0)) {
      // Act
      const operation = operationWithId(route.operationId);
      const notImplemented = response(operation, '501');
      // Assess
      expect(Object.keys(operation.responses).filter((status) => Number(status) < 400)).toEqual([]);
      expect(errorConstraints(notImplemented.content?.['application/json']?.schema as Schema).codes).toEqual([
        'NOT_IMPLEMENTED',
      ]);
      expect(Object.keys(notImplemented.headers ?? {}).includes('Deprecation')).toBe(route.deprecated === true);
    }
    // The documented Deprecation example has the shape the handler sends.
    const deprecation = doc.components.headers?.Deprecation as { schema: { examples: string[] } };
    const example = deprecation.schema.examples[0];
    expect(deprecationHeaders({ deprecatedAt: '2026-11-22' }).Deprecation).toBe(example);
  });

  it('documents the answers API Gateway and the authorizer can give on every operation, with their headers', () => {
    for (const { operation } of operations) {
      for (const status of ['400', '401', '403', '405', '413', '429', '500', '503', '504']) {
        expect(Object.keys(operation.responses)).toContain(status);
      }
      // Assess
      expect(response(operation, '401').headers?.['WWW-Authenticate']).toMatchObject({ required: true });
      expect(response(operation, '503').headers?.['Retry-After']).toMatchObject({ required: true });
      expect(response(operation, '429').headers?.['Retry-After']).toBeDefined();
      expect(response(operation, '405').headers?.Allow).toMatchObject({ required: true });
      // Every answer but API Gateway's own 413, which AWS does not let be customized: plain text, no Cache-Control.
      for (const status of Object.keys(operation.responses).filter((candidate) => candidate !== '413')) {
        expect(response(operation, status).headers?.['Cache-Control']).toMatchObject({ required: true });
      }
      expect(Object.keys(response(operation, '413').content ?? {})).toEqual(['text/plain', 'application/json']);
      expect(response(operation, '413').headers?.['Cache-Control']?.required ?? false).toBe(false);
    }
    for (const gateway of GATEWAY_RESPONSE_TYPES.map(gatewayResponse))
      expect(Object.keys(ERROR_CODES)).toContain(gateway.code);
    const retryAfter = doc.components.headers?.RetryAfterRequired as { schema: Schema };
    expect(RETRY_AFTER_SECONDS).toBeGreaterThanOrEqual(retryAfter.schema.minimum ?? 0);
  });

  it('has the body limit and the quantity bounds of the code', () => {
    // Prepare
    const update = operationWithId('updateInventory');
    // Assess
    expect(update.requestBody?.description).toContain(`At most ${MAX_BODY_BYTES} bytes`);
    expect(JSON.stringify(response(update, '413'))).toContain(`${MAX_BODY_BYTES} bytes`);
    const batch = operationWithId('applyInventoryChanges');
    expect(batch.requestBody?.description).toContain(`At most ${MAX_BATCH_BODY_BYTES.toLocaleString('en-US')} bytes`);
    expect(schema('InventoryChanges').properties?.changes).toMatchObject({ minItems: 1, maxItems: MAX_CHANGES });
    expect(schema('ChangeReason').enum).toEqual([...CHANGE_REASONS]);
    expect(schema('ChangeReference')).toMatchObject({ minLength: 1, maxLength: MAX_REFERENCE_CHARACTERS });
    for (const name of ['InventoryItem', 'InventoryUpdate']) {
      expect(schema(name).properties?.quantity).toMatchObject({ type: 'integer', minimum: 0, maximum: MAX_QUANTITY });
      expect(schema(name).additionalProperties).toBe(false);
    }
    expect(schema('InventoryUpdate').required).toEqual(['quantity']);
    expect(schema('InventoryItem').required).toEqual(
      Object.entries(INVENTORY_ITEM_FIELDS)
        .filter(([, field]) => !('optional' in field))
        .map(([name]) => name),
    );
    expect(Object.keys(schema('InventoryItem').properties ?? {})).toEqual(Object.keys(INVENTORY_ITEM_FIELDS));
    expect(schema('InventoryItem').properties?.petId).toMatchObject({ type: 'integer', format: 'int64' });
    expect(schema('PetStatus').enum).toEqual([...PET_STATUSES]);
  });

  it("gives the batch's duplicate-petId example the message the parser answers", () => {
    // Prepare
    const badRequest = resolveRef(operationWithId('applyInventoryChanges').responses['400']) as {
      content: Record<string, { examples: Record<string, { value: { message: string } }> }>;
    };
    const example = badRequest.content['application/json']?.examples.batchDuplicatePetId?.value.message;
    // Act
    const parsing = () =>
      parseInventoryChanges('{"changes":[{"petId":7,"adjustBy":1},{"petId":8,"adjustBy":1},{"petId":7,"adjustBy":2}]}');
    // Assess
    expect(parsing).toThrow(new ValidationError(example ?? 'no example'));
  });

  it("projects every field of the entry into the list's index, so GET /inventory answers whole entries", () => {
    // The list reads only the index (service/names.ts): a field left out of its projection is missing from the list.
    const stored = [INVENTORY_TABLE_KEY.name, ...INVENTORY_LIST_INDEX.projected].sort();
    expect(stored).toEqual(Object.keys(INVENTORY_ITEM_FIELDS).sort());
  });

  it("documents the list's page parameters with the code's bounds and the Link header the function sends", () => {
    // Prepare
    const list = operationWithId('listInventory');
    const query = queryParameters(list);
    // Assess
    expect(Object.keys(query).sort()).toEqual(['after', 'limit']);
    expect(query.limit?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT });
    expect(query.after?.schema).toMatchObject({ type: 'integer', format: 'int64' });
    expect(Object.values(query).every((p) => p.required !== true)).toBe(true);
    const link = (response(list, '200').headers?.Link ?? {}) as { example?: string };
    const changes = changesLink({ sequence: 42, at: 1_795_430_000_000 }, 'changes');
    expect(link.example).toBe(`${nextPageLink('/inventory', { limit: 5000, after: '9007199254740993' })}, ${changes}`);
    expect(link.example).toMatch(new RegExp(`^</${API_STAGE_NAME}/inventory\\?limit=`));
  });

  it("documents the history's page parameters with the code's bounds and the Link header the function sends", () => {
    // Prepare
    const history = operationWithId('listInventoryHistory');
    const query = queryParameters(history);
    // Assess
    expect(Object.keys(query).sort()).toEqual(['cursor', 'limit']);
    expect(query.limit?.schema).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: MAX_HISTORY_LIMIT,
      default: DEFAULT_HISTORY_LIMIT,
    });
    const link = (response(history, '200').headers?.Link ?? {}) as { example?: string };
    // A cursor as the function makes it, of a row's position (a stream sequence number, padded).
    const cursor = cursorOf(historySortKey('100000001'));
    expect(link.example).toBe(nextPageLink('/inventory/7/history', { limit: 100, cursor }));
    expect(cursor).toMatch(new RegExp(query.cursor?.schema?.pattern ?? '^$'));
    expect(cursor.length).toBeLessThanOrEqual(query.cursor?.schema?.maxLength ?? 0);
  });

  it("documents the feed's page parameters with the code's bounds, the Link it always sends and the longest cursor", () => {
    // Prepare
    const feed = operationWithId('listInventoryChanges');
    const query = queryParameters(feed);
    // Assess
    expect(Object.keys(query).sort()).toEqual(['cursor', 'limit']);
    expect(query.limit?.schema).toMatchObject({ minimum: 1, maximum: MAX_FEED_LIMIT, default: DEFAULT_FEED_LIMIT });
    const link = (response(feed, '200').headers?.Link ?? {}) as { example?: string; required?: boolean };
    expect(link.required).toBe(true);
    expect(link.example).toBe(changesLink({ sequence: 42, at: 1_795_430_000_000 }, 'next'));
    const longest = encodeFeedCursor({ sequence: Number.MAX_SAFE_INTEGER, at: 8.64e15 });
    expect(longest).toMatch(new RegExp(query.cursor?.schema?.pattern ?? '^$'));
    expect(longest.length).toBeLessThanOrEqual(query.cursor?.schema?.maxLength ?? 0);
    expect(response(feed, '410')).toBeDefined();
  });
});
