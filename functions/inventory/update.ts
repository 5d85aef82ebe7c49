import { ValidationError } from './errors';
import { describeJsonType, type JsonWithLiterals, parseJsonWithLiterals, topLevelParts } from './json-literals';
import { parseQuantityLiteral, quantityRule } from './quantity';
import type { InventoryUpdate } from './types';

/** The members the body may have; `quantity` is required. */
const MEMBERS = ['quantity', 'expectedQuantity'];

/**
 * Parses and validates the body of `PATCH /inventory/{petId}`.
 *
 * The body must be a JSON object with the member `quantity` and, optionally, `expectedQuantity` (compare-and-set),
 * each written as an integer literal (no fraction or exponent: `5.0` and `5e0` are refused) from 0 to 2147483647.
 * Any other member is refused, and so is a duplicate member, rather than letting the last one win silently.
 *
 * @throws ValidationError naming the field and the rule.
 */
export function parseInventoryUpdate(text: string): InventoryUpdate {
  if (text.trim().length === 0) throw new ValidationError('The request body is empty; send {"quantity": <integer>}.');
  let json: JsonWithLiterals;
  try {
    json = parseJsonWithLiterals(text);
  } catch {
    throw new ValidationError('The request body is not valid JSON.', 'MALFORMED_JSON');
  }
  const parsed = json.value;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError('The request body must be a JSON object with the member quantity.');
  }
  const members = Object.keys(parsed);
  const unknown = members.filter((name) => !MEMBERS.includes(name));
  if (unknown.length > 0) {
    throw new ValidationError(
      `Unknown member${unknown.length > 1 ? 's' : ''} ${unknown.map((m) => JSON.stringify(m)).join(', ')}; the body takes only quantity and expectedQuantity.`,
    );
  }
  if (topLevelParts(text).length !== members.length) {
    throw new ValidationError('The request body repeats a member; send each member once.');
  }
  if (!('quantity' in parsed)) throw new ValidationError(`quantity is required; ${quantityRule()}.`);
  const quantity = readQuantity(json, parsed, 'quantity');
  if (!('expectedQuantity' in parsed)) return { quantity };
  return { quantity, expectedQuantity: readQuantity(json, parsed, 'expectedQuantity') };
}

function readQuantity(json: JsonWithLiterals, holder: object, field: string): number {
  const value = (holder as Record<string, unknown>)[field];
  if (typeof value !== 'number') throw new ValidationError(`${quantityRule(field)}; got ${describeJsonType(value)}.`);
  return parseQuantityLiteral(json.literalOf(holder, field) ?? '', field);
}
