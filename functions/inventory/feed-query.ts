import { CursorExpiredError, ValidationError } from './errors';
import { parseLimit, refuseRepeated } from './list-query';

/** Most events one page of the feed may ask for (`limit`), and how many it gets when it asks for none. */
export const MAX_FEED_LIMIT = 1000;
export const DEFAULT_FEED_LIMIT = 100;

/**
 * A place in the feed: after the event numbered `sequence`, which took its place at `at` (epoch ms). Sequence 0 is
 * the start, the oldest event kept, and has no time.
 */
export interface FeedCursor {
  sequence: number;
  at?: number;
}

/** The start of the feed. */
export const FEED_START: FeedCursor = { sequence: 0 };

/** The opaque text of a cursor: `sequence.at` (or `0`), base64url (RFC 4648 §5). */
export function encodeFeedCursor(cursor: FeedCursor): string {
  const text = cursor.sequence === 0 ? '0' : `${cursor.sequence}.${cursor.at ?? 0}`;
  return Buffer.from(text, 'latin1').toString('base64url');
}

/**
 * Reads `limit` and `cursor` from the query string (other parameters are ignored); a cursor whose event is older than
 * `retentionDays` before `now` may have lost events after it.
 * @throws ValidationError for a bad limit or a cursor this API did not give
 * @throws CursorExpiredError for a cursor older than the retention
 */
export function parseFeedQuery(
  single: Readonly<Record<string, string | undefined>> | null | undefined,
  multi: Readonly<Record<string, readonly string[] | undefined>> | null | undefined,
  retention: { days: number; now: number },
): { limit: number; cursor: FeedCursor } {
  refuseRepeated(multi, ['limit', 'cursor']);
  const limit = parseLimit(single?.limit, MAX_FEED_LIMIT) ?? DEFAULT_FEED_LIMIT;
  const text = single?.cursor;
  if (text === undefined) return { limit, cursor: FEED_START };
  const cursor = decodeFeedCursor(text);
  if (cursor.at !== undefined && cursor.at < retention.now - retention.days * 86_400_000)
    throw new CursorExpiredError(retention.days);
  return { limit, cursor };
}

/** The cursor a text stands for; anything this API did not give (empty, altered) is refused. @throws ValidationError */
function decodeFeedCursor(text: string): FeedCursor {
  const match = /^(?:0|([1-9][0-9]{0,15})\.([0-9]{1,15}))$/.exec(Buffer.from(text, 'base64url').toString('latin1'));
  const cursor = match?.[1] ? { sequence: Number(match[1]), at: Number(match[2]) } : FEED_START;
  if (!match || encodeFeedCursor(cursor) !== text)
    throw new ValidationError(
      'cursor is not one this API gave: send back the cursor of a Link rel="next" or rel="changes" as given.',
    );
  return cursor;
}
