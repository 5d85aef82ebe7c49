import { ValidationError } from './errors';
import { type InventoryUpdate, MAX_QUANTITY } from './types';

const INTEGER_LITERAL = /^-?(0|[1-9][0-9]*)$/;
const QUANTITY_RULE = `quantity must be an integer from 0 to ${MAX_QUANTITY}`;

/** The reviver context Node >= 21 passes to JSON.parse revivers (proposal-json-parse-with-source). */
interface ReviverContext {
  source?: string;
}

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
  let parsed: unknown;
  const literals = new Map<string, string>();
  try {
    parsed = JSON.parse(
      text,
      function collectLiterals(this: unknown, key: string, value: unknown, context?: ReviverContext) {
        if (this !== null && typeof this === 'object' && !Array.isArray(this) && context?.source !== undefined) {
          literals.set(key, context.source);
        }
        return value;
      },
    );
  } catch {
    throw new ValidationError('The request body is not valid JSON.', 'MALFORMED_JSON');
  }
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
  if (countTopLevelMembers(text) !== members.length) {
    throw new ValidationError('The request body repeats a member; send quantity once.');
  }
  if (!('quantity' in parsed)) throw new ValidationError(`quantity is required; ${QUANTITY_RULE}.`);
  const quantity = (parsed as { quantity: unknown }).quantity;
  if (typeof quantity !== 'number') {
    throw new ValidationError(
      `${QUANTITY_RULE}; got ${quantity === null ? 'null' : `a ${Array.isArray(quantity) ? 'array' : typeof quantity}`}.`,
    );
  }
  const literal = literals.get('quantity');
  if (literal === undefined || !INTEGER_LITERAL.test(literal) || !Number.isSafeInteger(quantity)) {
    throw new ValidationError(`${QUANTITY_RULE}, written without a fraction or exponent.`);
  }
  if (quantity < 0 || quantity > MAX_QUANTITY) throw new ValidationError(`${QUANTITY_RULE}; got ${literal}.`);
  return { quantity };
}

/**
 * Counts the members of the top-level JSON object in `text` (already known to be valid JSON), so that duplicates,
 * which JSON.parse folds into one, can be detected. Shared with the CLI's import, which applies the same rule.
 */
export function countTopLevelMembers(text: string): number {
  let depth = 0;
  let members = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    else if (ch === ':' && depth === 1) members++;
  }
  return members;
}
