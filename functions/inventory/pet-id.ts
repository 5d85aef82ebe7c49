import { ValidationError } from './errors';
import { MAX_PET_ID, MIN_PET_ID } from './types';

const DECIMAL_INTEGER = /^-?[0-9]+$/;
/** The longest petId as written: a plain-digit path stays under the firewall's 1,024-byte URI rule (docs/api.md). */
const MAX_PET_ID_CHARACTERS = 1000;

/** The rule a petId (or another int64 field) follows, as messages state it. */
export function petIdRule(field: string): string {
  return `${field} must be a decimal integer from ${MIN_PET_ID} to ${MAX_PET_ID}`;
}

/**
 * Parses a petId (path segment, or the query parameter `field`) into canonical int64 digits: `-` and ASCII digits
 * only, leading zeros dropped and `-0` is 0, so one pet has one key. @throws ValidationError
 */
export function parsePetId(raw: string | undefined, field = 'petId'): string {
  const rule = petIdRule(field);
  if (raw === undefined || raw.length === 0) throw new ValidationError(`${rule}; it is missing.`);
  if (raw.length > MAX_PET_ID_CHARACTERS) {
    throw new ValidationError(`${rule}, written in at most ${MAX_PET_ID_CHARACTERS} characters; got ${raw.length}.`);
  }
  if (!DECIMAL_INTEGER.test(raw)) throw new ValidationError(`${rule}.`);
  const value = BigInt(raw);
  if (value < MIN_PET_ID || value > MAX_PET_ID) throw new ValidationError(`${rule}; it is out of range.`);
  return value.toString();
}
