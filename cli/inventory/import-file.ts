import { parseFieldMember, parseFieldText, readItemFields } from '../../functions/inventory/item-fields';
import {
  describeJsonType,
  isJsonObject,
  parseJsonWithLiterals,
  topLevelParts,
} from '../../functions/inventory/json-literals';
import { INVENTORY_ITEM_FIELD_LIST, type InventoryItem, type ItemField } from '../../functions/inventory/types';
import { check, type LineProblem, readCsvTable, repeatedPetId, stripBom } from './csv';

/** File formats `inventory import` reads. */
export type ImportFormat = 'csv' | 'json';

/**
 * The columns of a CSV file and the members of a JSON entry: the entry's fields. A CSV names every required column
 * and may name an optional one (its cells may be empty); a JSON entry may leave an optional member out.
 */
const CSV_COLUMNS: readonly string[] = INVENTORY_ITEM_FIELD_LIST.filter(([, field]) => !field.optional).map(
  ([name]) => name,
);
const OPTIONAL_COLUMNS: readonly string[] = INVENTORY_ITEM_FIELD_LIST.filter(([, field]) => field.optional).map(
  ([name]) => name,
);
const FIELD_NAMES = INVENTORY_ITEM_FIELD_LIST.map(([name]) => JSON.stringify(name)).join(',');

/** Picks the format: `.csv` / `.json` by extension, else JSON when the text starts with `[`, else CSV. */
export function detectFormat(path: string, text: string): ImportFormat {
  const lower = path.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.json')) return 'json';
  return stripBom(text).trimStart().startsWith('[') ? 'json' : 'csv';
}

/** Validates an import file with the API's own rules and no petId twice; every problem comes with its line. */
export function parseImport(text: string, format: ImportFormat): { items: InventoryItem[]; problems: LineProblem[] } {
  const { rows, problems } = format === 'csv' ? parseCsvImport(stripBom(text)) : parseJsonImport(stripBom(text));
  const seen = new Map<string, number>();
  const items: InventoryItem[] = [];
  for (const { line, item } of rows) {
    const repeated = repeatedPetId(seen, item.petId, line);
    if (repeated === undefined) items.push(item);
    else problems.push({ line, message: repeated });
  }
  return { items, problems: problems.sort((a, b) => a.line - b.line) };
}

interface LocatedItem {
  line: number;
  item: InventoryItem;
}

function parseCsvImport(text: string): { rows: LocatedItem[]; problems: LineProblem[] } {
  const { rows: records, problems } = readCsvTable(text, CSV_COLUMNS, OPTIONAL_COLUMNS);
  const rows: LocatedItem[] = [];
  for (const { line, fields } of records) {
    const errors: string[] = [];
    const item = readItemFields((name, field) => {
      // readCsvTable gives every column of the header; an optional column the header leaves out has no cell.
      const cell = (fields as Record<string, string | undefined>)[name] ?? '';
      // An optional field's empty cell leaves it out; a required one's is refused by its rule.
      return cell === '' && field.optional ? undefined : parseFieldText(name, field, cell);
    }, errors);
    if (item) rows.push({ line, item });
    else problems.push({ line, message: errors.join('; ') });
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
    return { rows, problems: [{ line: 1, message: `expected a JSON array of {${FIELD_NAMES}} objects` }] };
  }
  for (const element of topLevelParts(text)) {
    const errors: string[] = [];
    const item = check(errors, () => parseJsonItem(element.text));
    if (item === undefined) problems.push({ line: element.line, message: errors.join('; ') });
    else rows.push({ line: element.line, item });
  }
  return { rows, problems };
}

/** Validates one array element, reading number literals from the source text so int64 ids keep every digit. */
function parseJsonItem(text: string): InventoryItem {
  const json = parseJsonWithLiterals(text);
  const { value } = json;
  if (!isJsonObject(value)) throw new Error(`expected an object {${FIELD_NAMES}}, got ${describeJsonType(value)}`);
  const record = value;
  const errors: string[] = [];
  const unknown = Object.keys(record).filter((name) => !CSV_COLUMNS.includes(name) && !OPTIONAL_COLUMNS.includes(name));
  if (unknown.length > 0)
    errors.push(`unknown member${unknown.length > 1 ? 's' : ''} ${unknown.map((m) => JSON.stringify(m)).join(', ')}`);
  if (topLevelParts(text).length !== Object.keys(record).length) errors.push('a member is repeated');
  const readMember = (name: string, field: ItemField) => {
    try {
      return parseFieldMember(json, record, name, field);
    } catch (error) {
      // The API's rule says "got a string"; the operator fixing the file wants the value.
      const member = record[name];
      if (typeof member !== 'string' || field.kind === 'enum') throw error;
      throw new Error((error as Error).message.replace(/got a string\.$/, `got the string ${JSON.stringify(member)}`));
    }
  };
  const item = readItemFields((name, field) => (name in record ? readMember(name, field) : undefined), errors);
  if (!item || errors.length > 0) throw new Error(errors.join('; '));
  return item;
}

/** The line of a JSON.parse error, from the position V8 puts in its message. */
function jsonErrorLine(error: unknown, text: string): number {
  const position = /position (\d+)/.exec((error as Error).message ?? '');
  if (!position) return 1;
  const before = text.slice(0, Number(position[1]));
  return before.split(/\r\n|\r|\n/).length;
}
