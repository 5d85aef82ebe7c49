import { CursorExpiredError, ValidationError } from '../../functions/inventory/errors';
import { encodeFeedCursor, FEED_START, parseFeedQuery } from '../../functions/inventory/feed-query';

const NOW = Date.parse('2026-12-06T04:00:00.000Z');
const DAY = 86_400_000;
const parse = (query: Record<string, string>, multi: Record<string, string[]> = {}) =>
  parseFeedQuery(query, multi, { days: 90, now: NOW });

describe('Function: parseFeedQuery', () => {
  it('reads no parameters as the first 100 events from the start', () => {
    expect(parse({})).toEqual({ limit: 100, cursor: FEED_START });
  });

  it('reads back the cursor it wrote, the start and a place after an event alike', () => {
    const after = { sequence: 9007199254740991, at: NOW - DAY };
    expect(parse({ cursor: encodeFeedCursor(after), limit: '1000' })).toEqual({ limit: 1000, cursor: after });
    expect(parse({ cursor: encodeFeedCursor(FEED_START) }).cursor).toEqual(FEED_START);
  });

  it.each([
    ['limit', { limit: '0' }],
    ['limit', { limit: '1001' }],
    ['limit', { limit: '1.5' }],
    ['cursor', { cursor: '' }],
    ['cursor', { cursor: 'not-a-cursor' }],
    ['cursor', { cursor: Buffer.from('-1.5').toString('base64url') }],
    ['cursor', { cursor: Buffer.from('01.5').toString('base64url') }],
    ['cursor', { cursor: `${encodeFeedCursor({ sequence: 5, at: NOW })}=` }],
  ])('refuses a bad %s with a ValidationError naming it (%j)', (name, query) => {
    expect(() => parse(query)).toThrow(ValidationError);
    expect(() => parse(query)).toThrow(new RegExp(`^${name} `));
  });

  it('refuses a parameter given twice', () => {
    expect(() => parse({ limit: '5' }, { limit: ['5', '6'] })).toThrow('limit must be given once.');
  });

  it("answers CursorExpiredError for a cursor whose event is older than the retention, never for the start's", () => {
    const old = encodeFeedCursor({ sequence: 5, at: NOW - 90 * DAY - 1 });
    const edge = encodeFeedCursor({ sequence: 5, at: NOW - 90 * DAY });
    expect(() => parse({ cursor: old })).toThrow(CursorExpiredError);
    expect(() => parse({ cursor: old })).toThrow(/Link rel="changes"/);
    expect(parse({ cursor: edge }).cursor.sequence).toBe(5);
    expect(parse({ cursor: encodeFeedCursor(FEED_START) }).cursor).toEqual(FEED_START);
  });
});
