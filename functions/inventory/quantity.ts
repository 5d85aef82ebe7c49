import { ValidationError } from './errors';
import { INTEGER_LITERAL } from './json-literals';

/** The integers a field takes: its bounds, and whether 0 is refused. */
export interface IntegerRange {
  min: number;
  max: number;
  nonZero?: boolean;
}

/** The rule a field's integers follow, as messages state it. */
export function integerRule(field: string, range: IntegerRange): string {
  return `${field} must be an integer${range.nonZero ? ' other than 0' : ''} from ${range.min} to ${range.max}`;
}

/** Reads an integer from its literal (JSON or CSV): `5.0`, `1e2`, `+5`, `-0` and `05` are refused, not rounded. */
export function parseIntegerLiteral(literal: string, field: string, range: IntegerRange): number {
  const rule = integerRule(field, range);
  if (!INTEGER_LITERAL.test(literal))
    throw new ValidationError(`${rule}, written without a fraction or exponent; got ${literal || 'nothing'}.`);
  const value = Number(literal);
  // `-0` is 0 to Number, but it has a sign: refused like any other.
  const outside = value < range.min || value > range.max || (range.nonZero === true && value === 0);
  if (!Number.isSafeInteger(value) || Object.is(value, -0) || outside)
    throw new ValidationError(`${rule}; got ${literal}.`);
  return value;
}
