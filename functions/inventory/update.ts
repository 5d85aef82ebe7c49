import { ValidationError } from './errors';
import {
  describeJsonType,
  INTEGER_LITERAL,
  type JsonWithLiterals,
  parseJsonWithLiterals,
  topLevelParts,
} from './json-literals';
import { parseQuantityLiteral, quantityRule } from './quantity';
import { type InventoryChange, MAX_QUANTITY } from './types';

/** The members the body may have: exactly one of `quantity` and `adjustBy`; `expectedQuantity` only with `quantity`. */
const MEMBERS = ['quantity', 'expectedQuantity', 'adjustBy'];

/** The rule an adjustment follows, as messages state it. */
export function adjustByRule(): string {
  return `adjustBy must be an integer other than 0 from -${MAX_QUANTITY} to ${MAX_QUANTITY}`;
}

/**
 * Parses and validates the body of `PATCH /inventory/{petId}`.
 *
 * The body must be a JSON object with either the member `quantity` and, optionally, `expectedQuantity`
 * (compare-and-set), each an integer from 0 to 2147483647, or the member `adjustBy` alone, an integer other than 0
 * within ±2147483647; every number is written as an integer literal (no fraction or exponent: `5.0` and `5e0` are
 * refused). Any other member is refused, and so is a duplicate member, rather than letting the last one win silently.
 *
 * @throws ValidationError naming the field and the rule.
 */
export function parseInventoryUpdate(text: string): InventoryChange {
  if (text.trim().length === 0)
    throw new ValidationError('The request body is empty; send {"quantity": <integer>} or {"adjustBy": <integer>}.');
  let json: JsonWithLiterals;
  try {
    json = parseJsonWithLiterals(text);
  } catch {
    throw new ValidationError('The request body is not valid JSON.', 'MALFORMED_JSON');
  }
  const parsed = json.value;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError('The request body must be a JSON object with the member quantity or adjustBy.');
  }
  const members = Object.keys(parsed);
  const unknown = members.filter((name) => !MEMBERS.includes(name));
  if (unknown.length > 0) {
    throw new ValidationError(
      `Unknown member${unknown.length > 1 ? 's' : ''} ${unknown.map((m) => JSON.stringify(m)).join(', ')}; the body takes only quantity, expectedQuantity and adjustBy.`,
    );
  }
  if (topLevelParts(text).length !== members.length) {
    throw new ValidationError('The request body repeats a member; send each member once.');
  }
  if ('adjustBy' in parsed) {
    if ('quantity' in parsed || 'expectedQuantity' in parsed)
      throw new ValidationError(
        'adjustBy cannot be combined with quantity or expectedQuantity; send either {"quantity": n} or {"adjustBy": n}.',
      );
    return { adjustBy: readAdjustBy(json, parsed) };
  }
  if (!('quantity' in parsed))
    throw new ValidationError(
      `quantity or adjustBy is required (expectedQuantity goes with quantity); ${quantityRule()}.`,
    );
  const quantity = readQuantity(json, parsed, 'quantity');
  if (!('expectedQuantity' in parsed)) return { quantity };
  return { quantity, expectedQuantity: readQuantity(json, parsed, 'expectedQuantity') };
}

function readQuantity(json: JsonWithLiterals, holder: object, field: string): number {
  const value = (holder as Record<string, unknown>)[field];
  if (typeof value !== 'number') throw new ValidationError(`${quantityRule(field)}; got ${describeJsonType(value)}.`);
  return parseQuantityLiteral(json.literalOf(holder, field) ?? '', field);
}

function readAdjustBy(json: JsonWithLiterals, holder: object): number {
  const value = (holder as Record<string, unknown>).adjustBy;
  if (typeof value !== 'number') throw new ValidationError(`${adjustByRule()}; got ${describeJsonType(value)}.`);
  const literal = json.literalOf(holder, 'adjustBy') ?? '';
  if (!INTEGER_LITERAL.test(literal))
    throw new ValidationError(
      `${adjustByRule()}, written without a fraction or exponent; got ${literal || 'nothing'}.`,
    );
  const delta = Number(literal);
  if (!Number.isSafeInteger(delta) || delta === 0 || Math.abs(delta) > MAX_QUANTITY)
    throw new ValidationError(`${adjustByRule()}; got ${literal}.`);
  return delta;
}
