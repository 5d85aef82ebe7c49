import { describeJsonType, parseJsonWithLiterals, topLevelParts } from '../../functions/inventory/json-literals';
import { parsePetId } from '../../functions/inventory/pet-id';
import { parseQuantityLiteral, quantityRule } from '../../functions/inventory/quantity';
import { type InventoryItem, isPetStatus, PET_STATUSES } from '../../functions/inventory/types';
import { type LineProblem, readCsvTable } from './csv';

/** File formats `inventory import` reads. */
export const IMPORT_FORMATS = ['csv', 'json'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** The rows of an import file, each validated; `problems` empty means every row is good. */
export interface ParsedImport {
  items: InventoryItem[];
  problems: LineProblem[];
}

const CSV_COLUMNS = ['petId', 'quantity', 'status'] as const;
const STATUS_RULE = `status must be one of ${PET_STATUSES.join(', ')}`;
const BOM = '\uFEFF';

/** Picks the format: `.csv` / `.json` by extension, else JSON when the text starts with `[`, else CSV. */
export function detectFormat(path: string, text: string): ImportFormat {
  const lower = path.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.json')) return 'json';
  return stripBom(text).trimStart().startsWith('[') ? 'json' : 'csv';
}

/** Validates an import file with the API's own rules and no petId twice; every problem comes with its line. */
export function parseImport(text: string, format: ImportFormat): ParsedImport {
  const parsed = format === 'csv' ? parseCsvImport(stripBom(text)) : parseJsonImport(stripBom(text));
  const problems = [...parsed.problems, ...findDuplicates(parsed.rows)].sort((a, b) => a.line - b.line);
  return { items: parsed.rows.map((row) => row.item), problems };
}

interface LocatedItem {
  line: number;
  item: InventoryItem;
}

function stripBom(text: string): string {
  return text.startsWith(BOM) ? text.slice(1) : text;
}

function parseCsvImport(text: string): { rows: LocatedItem[]; problems: LineProblem[] } {
  const { rows: records, problems } = readCsvTable(text, CSV_COLUMNS);
  const rows: LocatedItem[] = [];
  for (const { line, fields } of records) {
    const errors: string[] = [];
    const petId = check(errors, () => parsePetId(fields.petId));
    const quantity = check(errors, () => parseQuantityLiteral(fields.quantity));
    const status = check(errors, () => parseStatus(fields.status));
    if (errors.length > 0) problems.push({ line, message: errors.join('; ') });
    else rows.push({ line, item: { petId, quantity, status } as InventoryItem });
  }
  return { rows, problems };
}

function parseJsonImport(text: string): { rows: LocatedItem[]; problems: LineProblem[] } {
  const rows: LocatedItem[] = [];
  const problems: LineProblem[] = [];
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch (error) {
    return {
      rows,
      problems: [{ line: jsonErrorLine(error, text), message: `not valid JSON: ${(error as Error).message}` }],
    };
  }
  if (!Array.isArray(whole)) {
    return { rows, problems: [{ line: 1, message: 'expected a JSON array of {"petId","quantity","status"} objects' }] };
  }
  for (const element of topLevelParts(text)) {
    const errors: string[] = [];
    const item = check(errors, () => parseJsonItem(element.text));
    if (errors.length > 0) problems.push({ line: element.line, message: errors.join('; ') });
    else rows.push({ line: element.line, item });
  }
  return { rows, problems };
}

/** Validates one array element, reading number literals from the source text so int64 ids keep every digit. */
function parseJsonItem(text: string): InventoryItem {
  const { value, literalOf } = parseJsonWithLiterals(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`expected an object {"petId","quantity","status"}, got ${describeJsonType(value)}`);
  const record = value as Record<string, unknown>;
  const errors: string[] = [];
  const unknown = Object.keys(record).filter((name) => !(CSV_COLUMNS as readonly string[]).includes(name));
  if (unknown.length > 0)
    errors.push(`unknown member${unknown.length > 1 ? 's' : ''} ${unknown.map((m) => JSON.stringify(m)).join(', ')}`);
  if (topLevelParts(text).length !== Object.keys(record).length) errors.push('a member is repeated');
  const petId = check(errors, () => {
    if (!('petId' in record)) throw new Error('petId is missing');
    if (typeof record.petId !== 'number') throw new Error(`petId must be a JSON integer, got ${shown(record.petId)}`);
    return parsePetId(literalOf(record, 'petId'));
  });
  const quantity = check(errors, () => {
    if (!('quantity' in record)) throw new Error(`quantity is missing; ${quantityRule()}`);
    if (typeof record.quantity !== 'number') throw new Error(`${quantityRule()}, got ${shown(record.quantity)}`);
    return parseQuantityLiteral(literalOf(record, 'quantity') ?? '');
  });
  const status = check(errors, () => {
    if (!('status' in record)) throw new Error(`status is missing; ${STATUS_RULE}`);
    return parseStatus(record.status);
  });
  if (errors.length > 0) throw new Error(errors.join('; '));
  return { petId, quantity, status } as InventoryItem;
}

function parseStatus(value: unknown): InventoryItem['status'] {
  if (!isPetStatus(value))
    throw new Error(
      `${STATUS_RULE}; got ${typeof value === 'string' ? JSON.stringify(value) : describeJsonType(value)}`,
    );
  return value;
}

/** Runs one check, collecting its message instead of stopping at the first problem of a row. */
function check<T>(errors: string[], parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    errors.push((error as Error).message.replace(/\.$/, ''));
    return undefined as T;
  }
}

/** A value as an operator fixing the file wants to see it: a primitive as written, else its kind. */
function shown(value: unknown): string {
  return ['string', 'number', 'boolean'].includes(typeof value) ? JSON.stringify(value) : describeJsonType(value);
}

function findDuplicates(rows: readonly LocatedItem[]): LineProblem[] {
  const firstLine = new Map<string, number>();
  const problems: LineProblem[] = [];
  for (const row of rows) {
    const earlier = firstLine.get(row.item.petId);
    if (earlier === undefined) firstLine.set(row.item.petId, row.line);
    else problems.push({ line: row.line, message: `petId ${row.item.petId} is already on line ${earlier}` });
  }
  return problems;
}

/** The line of a JSON.parse error, from the position V8 puts in its message. */
function jsonErrorLine(error: unknown, text: string): number {
  const position = /position (\d+)/.exec((error as Error).message ?? '');
  if (!position) return 1;
  const before = text.slice(0, Number(position[1]));
  return before.split(/\r\n|\r|\n/).length;
}
