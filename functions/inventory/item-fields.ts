import { ValidationError } from './errors';
import { describeJsonType, INTEGER_LITERAL, type JsonWithLiterals } from './json-literals';
import { parsePetId, petIdRule } from './pet-id';
import { integerRule, parseIntegerLiteral } from './quantity';
import { INVENTORY_ITEM_FIELD_LIST, type InventoryItem, type ItemField } from './types';

// An entry read field by field from INVENTORY_ITEM_FIELDS, whether from a CSV row, a JSON object or an API answer.

/** The rule a field's values follow, as messages state it. */
function fieldRule(name: string, field: ItemField): string {
  if (field.kind === 'enum') return `${name} must be one of ${field.values.join(', ')}`;
  if (field.kind === 'integer') return integerRule(name, field);
  return petIdRule(name);
}

/** Reads a field from its text (a CSV cell, a JSON number's literal or string's value). @throws ValidationError */
export function parseFieldText(name: string, field: ItemField, text: string): string | number {
  if (field.kind === 'int64') return parsePetId(text, name);
  if (field.kind === 'integer') return parseIntegerLiteral(text, name, field);
  if (!field.values.includes(text))
    throw new ValidationError(`${fieldRule(name, field)}; got ${JSON.stringify(text)}.`);
  return text;
}

/**
 * Reads a field from a parsed JSON member, a number from its literal so int64 digits stay exact: the one reader of
 * an entry's (or a change's) JSON members, for the API's bodies and answers and the CLI's import alike.
 */
export function parseFieldMember(json: JsonWithLiterals, holder: object, name: string, field: ItemField) {
  const value = (holder as Record<string, unknown>)[name];
  if (typeof value !== (field.kind === 'enum' ? 'string' : 'number'))
    throw new ValidationError(`${fieldRule(name, field)}; got ${describeJsonType(value)}.`);
  if (field.kind === 'enum') return parseFieldText(name, field, value as string);
  const literal = json.literalOf(holder, name) ?? '';
  // A path's petId may carry leading zeros; a JSON literal may carry a fraction or exponent, which no int64 has.
  if (field.kind === 'int64' && !INTEGER_LITERAL.test(literal))
    throw new ValidationError(`${fieldRule(name, field)}, written without a fraction or exponent; got ${literal}.`);
  return parseFieldText(name, field, literal);
}

/**
 * Reads every field with `read` (undefined: the field was not given), collecting each problem into `problems`
 * instead of stopping at the first; the entry when there was none.
 */
export function readItemFields(
  read: (name: string, field: ItemField) => string | number | undefined,
  problems: string[],
): InventoryItem | undefined {
  const item: Record<string, string | number> = {};
  const before = problems.length;
  for (const [name, field] of INVENTORY_ITEM_FIELD_LIST) {
    try {
      const value = read(name, field);
      if (value !== undefined) item[name] = value;
      else if (!field.optional) throw new ValidationError(`${name} is missing; ${fieldRule(name, field)}`);
    } catch (error) {
      problems.push((error as Error).message.replace(/\.$/, ''));
    }
  }
  return problems.length === before ? (item as InventoryItem) : undefined;
}
