import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import type { TestResponse } from './http';

/** Where the contract lives: the top-level openapi.yaml. */
export const OPENAPI_PATH = join(import.meta.dirname, '..', '..', 'openapi.yaml');

/** The parts of an OpenAPI 3.1 document the checks read. */
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

interface HeaderObject {
  required?: boolean;
  schema?: Record<string, unknown>;
}

interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject | { $ref: string }>;
  content?: Record<string, { schema?: unknown }>;
}

interface OperationObject {
  operationId?: string;
  responses: Record<string, ResponseObject | { $ref: string }>;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const CONTRACT_ID = 'urn:petstore:openapi';
const INT64_LITERAL = /^-?(0|[1-9][0-9]*)$/;
const MIN_INT64 = -(2n ** 63n);
const MAX_INT64 = 2n ** 63n - 1n;

let loaded:
  | {
      doc: OpenApiDocument;
      ajv: Ajv2020;
      validators: Map<string, ValidateFunction>;
      headerValidators: WeakMap<object, ValidateFunction>;
    }
  | undefined;

/** Reads and parses openapi.yaml once. */
export function loadContract(): OpenApiDocument {
  return contract().doc;
}

function contract() {
  if (!loaded) {
    const doc = parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument;
    // OpenAPI 3.1 schemas are JSON Schema 2020-12. The whole document is registered so that `#/components/...`
    // references resolve; its non-schema members (openapi, info, paths) are unknown keywords, hence strict: false.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...doc, $id: CONTRACT_ID });
    loaded = { doc, ajv, validators: new Map(), headerValidators: new WeakMap() };
  }
  return loaded;
}

/** Follows a local `$ref` (`#/components/...`) within the contract. */
export function resolveRef<T>(value: T | { $ref: string }): T {
  let current: unknown = value;
  for (let depth = 0; depth < 10; depth++) {
    if (!current || typeof current !== 'object' || !('$ref' in current)) return current as T;
    const ref = (current as { $ref: string }).$ref;
    if (!ref.startsWith('#/')) throw new Error(`Only local references are supported, got ${ref}`);
    current = ref
      .slice(2)
      .split('/')
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], contract().doc);
    if (current === undefined) throw new Error(`Unresolved reference ${ref} in openapi.yaml`);
  }
  throw new Error('Reference chain too deep in openapi.yaml');
}

function pointer(...parts: string[]): string {
  return `#/${parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
}

/** A validator for the schema at a JSON pointer into the contract, compiled once. */
function validatorAt(schemaPointer: string): ValidateFunction {
  const { ajv, validators } = contract();
  let validate = validators.get(schemaPointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `${CONTRACT_ID}${schemaPointer}` });
    validators.set(schemaPointer, validate);
  }
  return validate;
}

/** Finds the documented response for a status: exact code, then `4XX`-style range, then `default`. */
function documentedResponse(operation: OperationObject, status: number): { key: string; response: ResponseObject } {
  for (const key of [String(status), `${String(status)[0]}XX`, 'default']) {
    const candidate = operation.responses[key];
    if (candidate) return { key, response: resolveRef(candidate) };
  }
  throw new Error(
    `status ${status} is not documented for ${operation.operationId}; documented: ${Object.keys(operation.responses).join(', ')}`,
  );
}

/** A JSON value with the source text of every number kept, so int64 digits can be checked exactly. */
type SourceNode =
  | { kind: 'number'; source: string }
  | { kind: 'array'; items: SourceNode[] }
  | { kind: 'object'; members: Record<string, SourceNode> }
  | { kind: 'other' };

function parseWithSource(text: string): SourceNode {
  return JSON.parse(text, function keepSource(_key: string, value: unknown, context?: { source?: string }) {
    if (typeof value === 'number') return { kind: 'number', source: context?.source ?? String(value) };
    if (Array.isArray(value)) return { kind: 'array', items: value };
    if (value !== null && typeof value === 'object') return { kind: 'object', members: value };
    return { kind: 'other' };
  }) as SourceNode;
}

/**
 * Checks every value the schema declares `format: int64` on the raw JSON text: JSON.parse rounds integers beyond
 * 2^53, so ajv alone would accept 9223372036854775808 (out of range) and could not tell a rounded id.
 */
function checkInt64(schemaOrRef: unknown, node: SourceNode, at: string, problems: string[]): void {
  const schema = resolveRef(schemaOrRef) as Record<string, unknown> | undefined;
  if (!schema || typeof schema !== 'object') return;
  for (const part of (schema.allOf as unknown[] | undefined) ?? []) checkInt64(part, node, at, problems);
  if (schema.format === 'int64' && node.kind === 'number') {
    if (!INT64_LITERAL.test(node.source)) problems.push(`${at}: ${node.source} is not an integer literal (int64)`);
    else if (BigInt(node.source) < MIN_INT64 || BigInt(node.source) > MAX_INT64) {
      problems.push(`${at}: ${node.source} is outside the int64 range`);
    }
  }
  if (node.kind === 'array' && schema.items) {
    node.items.forEach((item, index) => {
      checkInt64(schema.items, item, `${at}/${index}`, problems);
    });
  }
  if (node.kind === 'object' && schema.properties) {
    const properties = schema.properties as Record<string, unknown>;
    for (const [name, member] of Object.entries(node.members)) {
      if (properties[name]) checkInt64(properties[name], member, `${at}/${name}`, problems);
    }
  }
}

function formatErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}`).join('; ');
}

function checkHeader(name: string, header: HeaderObject, headers: Headers, problems: string[]): void {
  const value = headers.get(name);
  if (value === null) {
    if (header.required) problems.push(`header ${name} is required`);
    return;
  }
  const schema = header.schema;
  if (!schema) return;
  const type = schema.type;
  let typed: unknown = value;
  if (type === 'integer' || type === 'number') {
    if (!/^-?[0-9]+(\.[0-9]+)?$/.test(value)) {
      problems.push(`header ${name}: ${JSON.stringify(value)} is not a ${type}`);
      return;
    }
    typed = Number(value);
  }
  const { ajv, headerValidators } = contract();
  let validate = headerValidators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    headerValidators.set(schema, validate);
  }
  if (!validate(typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${formatErrors(validate.errors)}`);
}

function checkErrorShape(response: Omit<TestResponse, never>, problems: string[]): void {
  const validate = validatorAt(pointer('components', 'schemas', 'Error'));
  if (response.json === undefined) problems.push(`an Error body is required, got ${JSON.stringify(response.text)}`);
  else if (!validate(response.json)) problems.push(`not an Error body: ${formatErrors(validate.errors)}`);
  else if ((response.json as { status: number }).status !== response.status) {
    problems.push(`Error status ${(response.json as { status: number }).status} differs from HTTP ${response.status}`);
  }
}

/**
 * Whether a request path is one the contract speaks for: its servers end in `/v1`, the stage. A request outside it
 * reaches no API, and API Gateway answers it itself (service/gateway-responses.ts, OUTSIDE_THE_STAGE).
 */
export function withinContract(pathname: string): boolean {
  return pathname === '/v1' || pathname.startsWith('/v1/');
}

/** The methods a path item documents, upper case, in the order `Allow` lists them. */
export function documentedMethods(route: string): string[] {
  const pathItem = contract().doc.paths[route] ?? {};
  return HTTP_METHODS.filter((method) => method in pathItem).map((method) => method.toUpperCase());
}

/**
 * Checks a response against openapi.yaml and throws with every problem found.
 *
 * - `route` is the OpenAPI path template the call was meant to hit (e.g. `/inventory/{petId}`). The status must be
 *   documented for that operation; the body must validate against the documented schema (int64 values checked on
 *   the raw text); the documented required headers must be present and valid; Content-Type must be the documented
 *   media type. A method the path does not document is expected to be refused (405 with `Allow` listing the path's
 *   methods, or one of the gateway's own refusals) with a documented Error response.
 * - `route` undefined (a path the contract does not describe): a non-2xx answer must still be the Error body with
 *   `status` equal to the HTTP status.
 */
export function assertMatchesContract(
  method: string,
  route: string | undefined,
  response: Omit<TestResponse, never>,
): void {
  const problems: string[] = [];
  const hasBody = method.toUpperCase() !== 'HEAD';
  if (route === undefined) {
    if (response.status >= 300 && hasBody) checkErrorShape(response, problems);
  } else {
    checkDescribedRoute(method, route, response, problems, hasBody);
  }
  if (problems.length > 0) {
    throw new Error(
      `Response to ${method} ${route ?? '(undescribed path)'} breaks openapi.yaml (status ${response.status}):\n- ${problems.join(
        '\n- ',
      )}\nbody: ${response.text.slice(0, 500)}`,
    );
  }
}

function checkDescribedRoute(
  method: string,
  route: string,
  response: Omit<TestResponse, never>,
  problems: string[],
  hasBody: boolean,
): void {
  const pathItem = contract().doc.paths[route];
  if (!pathItem) throw new Error(`${route} is not a path of openapi.yaml; pass route: undefined for such calls`);
  const verb = method.toLowerCase();
  const documented = pathItem[verb] as OperationObject | undefined;
  const operationKey = documented ? verb : HTTP_METHODS.find((candidate) => candidate in pathItem);
  if (!operationKey) throw new Error(`${route} documents no operation`);
  const operation = pathItem[operationKey] as OperationObject;
  if (!documented && response.status < 300) {
    problems.push(`${method} is not documented on ${route}, yet it was answered ${response.status}`);
    return;
  }
  let found: { key: string; response: ResponseObject };
  try {
    found = documentedResponse(operation, response.status);
  } catch (error) {
    problems.push((error as Error).message);
    return;
  }
  if (response.status === 405) {
    const allow = response.headers.get('allow');
    const expected = documentedMethods(route).join(', ');
    if (allow !== expected) problems.push(`Allow is ${JSON.stringify(allow)}, the contract documents ${expected}`);
  }
  for (const [name, header] of Object.entries(found.response.headers ?? {})) {
    checkHeader(name, resolveRef(header), response.headers, problems);
  }
  if (!hasBody) return;
  const mediaTypes = Object.keys(found.response.content ?? {});
  if (mediaTypes.length === 0) {
    if (response.text.length > 0) problems.push(`no body is documented, got ${response.text.length} characters`);
    return;
  }
  const contentType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  const mediaType = mediaTypes.find((candidate) => candidate === contentType);
  if (!mediaType) {
    problems.push(`Content-Type ${JSON.stringify(contentType)} is not documented (${mediaTypes.join(', ')})`);
    return;
  }
  // API Gateway's own 413, which AWS does not let be customized, is plain text (openapi.yaml, "Errors"), and the only
  // answer without Cache-Control: every JSON answer carries `no-store`, whether its header is documented as optional.
  if (mediaType === 'text/plain') return;
  if (response.headers.get('cache-control') !== 'no-store') {
    problems.push(
      `a JSON answer carries Cache-Control: no-store, got ${JSON.stringify(response.headers.get('cache-control'))}`,
    );
  }
  if (response.json === undefined) {
    problems.push('the body is not JSON');
    return;
  }
  const schemaPointer = pointer('paths', route, operationKey, 'responses', found.key);
  const responseRef = operation.responses[found.key];
  // Compile through the response's own $ref when it has one, so the compiled validator is shared across operations.
  const base =
    responseRef && '$ref' in responseRef
      ? `${(responseRef as { $ref: string }).$ref}`.slice(1)
      : schemaPointer.slice(1);
  const validate = validatorAt(`#${base}${pointer('content', mediaType, 'schema').slice(1)}`);
  if (!validate(response.json)) problems.push(`body: ${formatErrors(validate.errors)}`);
  checkInt64(found.response.content?.[mediaType]?.schema, parseWithSource(response.text), '', problems);
}
