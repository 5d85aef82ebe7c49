import { ValidationError } from './errors';
import { describeJsonType, type JsonWithLiterals, parseJsonWithLiterals, topLevelParts } from './json-literals';
import { type IntegerRange, integerRule, parseIntegerLiteral, QUANTITY, quantityRule } from './quantity';
import { type InventoryChange, MAX_QUANTITY } from './types';

/** The body's members and their ranges: `quantity` (with `expectedQuantity`) or `adjustBy`. */
const MEMBERS: Readonly<Record<string, IntegerRange>> = {
  quantity: QUANTITY,
  expectedQuantity: QUANTITY,
  adjustBy: { min: -MAX_QUANTITY, max: MAX_QUANTITY, nonZero: true },
};

/** Parses the body of `PATCH /inventory/{petId}` by docs/api.md's rules. @throws ValidationError naming the rule */
export function parseInventoryUpdate(text: string): InventoryChange {
  const json = parseBody(text);
  const body = json.value as Record<string, unknown>;
  const read = (field: string) => readMember(json, body, field);
  if ('adjustBy' in body) {
    if ('quantity' in body || 'expectedQuantity' in body)
      throw new ValidationError(
        'adjustBy cannot be combined with quantity or expectedQuantity; send either {"quantity": n} or {"adjustBy": n}.',
      );
    return { adjustBy: read('adjustBy') };
  }
  if (!('quantity' in body))
    throw new ValidationError(
      `quantity or adjustBy is required (expectedQuantity goes with quantity); ${quantityRule()}.`,
    );
  const quantity = read('quantity');
  return 'expectedQuantity' in body ? { quantity, expectedQuantity: read('expectedQuantity') } : { quantity };
}

/** The body as a JSON object of known members, each once, with the literals they were written as. */
function parseBody(text: string): JsonWithLiterals {
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
  const unknown = members.filter((name) => !Object.hasOwn(MEMBERS, name));
  if (unknown.length > 0) {
    throw new ValidationError(
      `Unknown member${unknown.length > 1 ? 's' : ''} ${unknown.map((m) => JSON.stringify(m)).join(', ')}; the body takes only quantity, expectedQuantity and adjustBy.`,
    );
  }
  if (topLevelParts(text).length !== members.length) {
    throw new ValidationError('The request body repeats a member; send each member once.');
  }
  return json;
}

function readMember(json: JsonWithLiterals, body: Record<string, unknown>, field: string): number {
  const range = MEMBERS[field] as IntegerRange;
  const value = body[field];
  if (typeof value !== 'number')
    throw new ValidationError(`${integerRule(field, range)}; got ${describeJsonType(value)}.`);
  return parseIntegerLiteral(json.literalOf(body, field) ?? '', field, range);
}
