import { ValidationError } from './errors';
import { MAX_PET_ID, MIN_PET_ID } from './types';

const DECIMAL_INTEGER = /^-?[0-9]+$/;
/** Digits of the largest int64 magnitude (9223372036854775808): more significant digits are out of range. */
const MAX_SIGNIFICANT_DIGITS = 19;

/**
 * Parses a petId (a path segment, or a query parameter named `field`) into its canonical decimal digits.
 *
 * Accepts an optional `-` and ASCII digits only (no `+`, whitespace, exponent or Unicode digits), within the int64
 * range. Leading zeros are dropped, however many (`007` is pet 7), and `-0` is `0`, so one pet has one key. The
 * significant digits are counted before any arithmetic, so a long value costs one linear pass.
 *
 * @throws ValidationError when the value is not such an integer.
 */
export function parsePetId(raw: string | undefined, field = 'petId'): string {
  const rule = `${field} must be a decimal integer from -9223372036854775808 to 9223372036854775807`;
  if (raw === undefined || raw.length === 0) throw new ValidationError(`${rule}; it is missing.`);
  if (!DECIMAL_INTEGER.test(raw)) throw new ValidationError(`${rule}.`);
  const negative = raw.startsWith('-');
  const digits = (negative ? raw.slice(1) : raw).replace(/^0+/, '') || '0';
  if (digits.length > MAX_SIGNIFICANT_DIGITS) throw new ValidationError(`${rule}; it is out of range.`);
  const value = BigInt(negative ? `-${digits}` : digits);
  if (value < MIN_PET_ID || value > MAX_PET_ID) throw new ValidationError(`${rule}; it is out of range.`);
  return value.toString();
}
