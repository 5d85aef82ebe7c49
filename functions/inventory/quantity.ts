import { ValidationError } from './errors';
import { INTEGER_LITERAL } from './json-literals';
import { MAX_QUANTITY } from './types';

/** The rule a stock quantity follows, as messages state it. */
export function quantityRule(field = 'quantity'): string {
  return `${field} must be an integer from 0 to ${MAX_QUANTITY}`;
}

/**
 * Reads a stock quantity from the literal it was written as (JSON or CSV): an integer with no sign, fraction,
 * exponent or leading zero, from 0 to 2147483647 (`5.0`, `1e2`, `+5`, `-0` and `05` are refused, not rounded).
 *
 * @throws ValidationError naming the field and the rule.
 */
export function parseQuantityLiteral(literal: string, field = 'quantity'): number {
  if (!INTEGER_LITERAL.test(literal)) {
    throw new ValidationError(
      `${quantityRule(field)}, written without a fraction or exponent; got ${literal || 'nothing'}.`,
    );
  }
  const value = Number(literal);
  // `-0` is 0 to Number, but it has a sign: refused like any other.
  if (!Number.isSafeInteger(value) || value < 0 || Object.is(value, -0) || value > MAX_QUANTITY)
    throw new ValidationError(`${quantityRule(field)}; got ${literal}.`);
  return value;
}
