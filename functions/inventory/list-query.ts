import { ValidationError } from './errors';
import { parsePetId } from './pet-id';
import type { ListOptions } from './repository';

/** Most entries one page of the list may ask for (`limit`). */
export const MAX_LIST_LIMIT = 10_000;

/** Query string parameters as API Gateway's proxy event gives them: the last value of each, and every value. */
type SingleValues = Readonly<Record<string, string | undefined>> | null | undefined;
type MultiValues = Readonly<Record<string, readonly string[] | undefined>> | null | undefined;

/** Reads `limit` and `after` from the query string; other parameters are ignored. @throws ValidationError */
export function parseListQuery(single: SingleValues, multi?: MultiValues): ListOptions {
  const query: ListOptions = {};
  refuseRepeated(multi, ['limit', 'after']);
  const limit = parseLimit(single?.limit, MAX_LIST_LIMIT);
  if (limit !== undefined) query.limit = limit;
  const after = single?.after;
  if (after === '') throw new ValidationError('after must be a petId (a decimal int64); it is empty.');
  if (after !== undefined) query.after = parsePetId(after, 'after');
  return query;
}

/** Refuses a parameter given more than once: which of its values was meant is anyone's guess. @throws ValidationError */
export function refuseRepeated(multi: MultiValues, names: readonly string[]): void {
  for (const name of names) {
    if ((multi?.[name]?.length ?? 0) > 1) throw new ValidationError(`${name} must be given once.`);
  }
}

/** A page's `limit`, an integer from 1 to `max`; undefined when absent. @throws ValidationError */
export function parseLimit(limit: string | undefined, max: number): number | undefined {
  if (limit === undefined) return undefined;
  const rule = `limit must be an integer from 1 to ${max}`;
  if (!/^-?[0-9]{1,6}$/.test(limit)) throw new ValidationError(`${rule}.`);
  const value = Number(limit);
  if (value < 1 || value > max) throw new ValidationError(`${rule}; got ${value}.`);
  return value;
}
