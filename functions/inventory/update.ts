import { ValidationError } from './errors';
import { describeJsonType, parseJsonWithLiterals, topLevelParts } from './json-literals';
import { parseQuantityLiteral, quantityRule } from './quantity';
import type { InventoryUpdate } from './types';

/**
 * Parses and validates the body of `PATCH /inventory/{petId}`.
 *
 * The body must be a JSON object with exactly one member, `quantity`, written as an integer literal (no fraction or
 * exponent: `5.0` and `5e0` are refused) from 0 to 2147483647. Duplicate members are refused rather than letting the
 * last one win silently.
 *
 * @throws ValidationError naming the field and the rule.
 */
export function parseInventoryUpdate(text: string): InventoryUpdate {
  if (text.trim().length === 0) throw new ValidationError('The request body is empty; send {"quantity": <integer>}.');
  let json: ReturnType<typeof parseJsonWithLiterals>;
  try {
    json = parseJsonWithLiterals(text);
  } catch {
    throw new ValidationError('The request body is not valid JSON.', 'MALFORMED_JSON');
  }
  const parsed = json.value;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError('The request body must be a JSON object with one member, quantity.');
  }
  const members = Object.keys(parsed);
  const unknown = members.filter((name) => name !== 'quantity');
  if (unknown.length > 0) {
    throw new ValidationError(
      `Unknown member${unknown.length > 1 ? 's' : ''} ${unknown.map((m) => JSON.stringify(m)).join(', ')}; the body takes only quantity.`,
    );
  }
  if (topLevelParts(text).length !== members.length) {
    throw new ValidationError('The request body repeats a member; send quantity once.');
  }
  if (!('quantity' in parsed)) throw new ValidationError(`quantity is required; ${quantityRule()}.`);
  const quantity = (parsed as { quantity: unknown }).quantity;
  if (typeof quantity !== 'number') throw new ValidationError(`${quantityRule()}; got ${describeJsonType(quantity)}.`);
  return { quantity: parseQuantityLiteral(json.literalOf(parsed, 'quantity') ?? '') };
}
