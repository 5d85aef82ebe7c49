import { ValidationError } from './errors';
import { parsePetId } from './pet-id';
import type { ListOptions } from './repository';

/** Most entries one page of the list may ask for (`limit`). */
export const MAX_LIST_LIMIT = 10_000;

/** Reads `limit` and `after` from the query string; other parameters are ignored. @throws ValidationError */
export function parseListQuery(
  single: Readonly<Record<string, string | undefined>> | null | undefined,
  multi?: Readonly<Record<string, readonly string[] | undefined>> | null,
): ListOptions {
  const query: ListOptions = {};
  for (const name of ['limit', 'after'] as const) {
    if ((multi?.[name]?.length ?? 0) > 1) throw new ValidationError(`${name} must be given once.`);
  }
  const limit = single?.limit;
  if (limit !== undefined) {
    const rule = `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`;
    if (!/^-?[0-9]{1,6}$/.test(limit)) throw new ValidationError(`${rule}.`);
    const value = Number(limit);
    if (value < 1 || value > MAX_LIST_LIMIT) throw new ValidationError(`${rule}; got ${value}.`);
    query.limit = value;
  }
  const after = single?.after;
  if (after === '') throw new ValidationError('after must be a petId (a decimal int64); it is empty.');
  if (after !== undefined) query.after = parsePetId(after, 'after');
  return query;
}
