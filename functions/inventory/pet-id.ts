import { ValidationError } from './errors';
import { MAX_PET_ID, MIN_PET_ID } from './types';

const DECIMAL_INTEGER = /^-?[0-9]+$/;
/** Digits of the largest int64 magnitude (9223372036854775808): more significant digits are out of range. */
const MAX_SIGNIFICANT_DIGITS = 19;
/**
 * The longest petId as written, sign and leading zeros included. Production's firewall blocks a URI path over 1,024
 * bytes (the AWS managed core rule set's SizeRestrictions_URIPath), and `/v1/inventory/` plus 1,000 plain digits
 * stays under it: past this every stage and the local API refuse it alike, with 400, instead of the firewall's 403
 * (percent-encoded digits, three bytes each on the wire, can still meet the firewall first).
 */
export const MAX_PET_ID_CHARACTERS = 1000;

/**
 * Parses a petId (a path segment, or a query parameter named `field`) into its canonical decimal digits.
 *
 * Accepts an optional `-` and ASCII digits only (no `+`, whitespace, exponent or Unicode digits), within the int64
 * range. Leading zeros are dropped (`007` is pet 7), and `-0` is `0`, so one pet has one key; the whole value is at
 * most {@link MAX_PET_ID_CHARACTERS} characters. The significant digits are counted before any arithmetic.
 *
 * @throws ValidationError when the value is not such an integer.
 */
export function parsePetId(raw: string | undefined, field = 'petId'): string {
  const rule = `${field} must be a decimal integer from -9223372036854775808 to 9223372036854775807`;
  if (raw === undefined || raw.length === 0) throw new ValidationError(`${rule}; it is missing.`);
  if (raw.length > MAX_PET_ID_CHARACTERS) {
    throw new ValidationError(`${rule}, written in at most ${MAX_PET_ID_CHARACTERS} characters; got ${raw.length}.`);
  }
  if (!DECIMAL_INTEGER.test(raw)) throw new ValidationError(`${rule}.`);
  const negative = raw.startsWith('-');
  const digits = (negative ? raw.slice(1) : raw).replace(/^0+/, '') || '0';
  if (digits.length > MAX_SIGNIFICANT_DIGITS) throw new ValidationError(`${rule}; it is out of range.`);
  const value = BigInt(negative ? `-${digits}` : digits);
  if (value < MIN_PET_ID || value > MAX_PET_ID) throw new ValidationError(`${rule}; it is out of range.`);
  return value.toString();
}
