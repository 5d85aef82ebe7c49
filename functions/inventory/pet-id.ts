import { ValidationError } from './errors';
import { MAX_PET_ID, MIN_PET_ID } from './types';

const DECIMAL_INTEGER = /^-?[0-9]+$/;
/** Longer than any int64 with generous leading zeros: refuse before doing arithmetic on it. */
const MAX_RAW_LENGTH = 40;

/**
 * Parses a petId (a path segment, or a query parameter named `field`) into its canonical decimal digits.
 *
 * Accepts an optional `-` and ASCII digits only (no `+`, whitespace, exponent or Unicode digits), within the int64
 * range. Leading zeros are dropped (`007` is pet 7) and `-0` is `0`, so one pet has one key.
 *
 * @throws ValidationError when the value is not such an integer.
 */
export function parsePetId(raw: string | undefined, field = 'petId'): string {
  const rule = `${field} must be a decimal integer from -9223372036854775808 to 9223372036854775807`;
  if (raw === undefined || raw.length === 0) throw new ValidationError(`${rule}; it is missing.`);
  if (raw.length > MAX_RAW_LENGTH || !DECIMAL_INTEGER.test(raw)) throw new ValidationError(`${rule}.`);
  const value = BigInt(raw);
  if (value < MIN_PET_ID || value > MAX_PET_ID) throw new ValidationError(`${rule}; it is out of range.`);
  return value.toString();
}
