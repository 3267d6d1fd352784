/**
 * Where a reader stands in a service's event log: the transaction that wrote an event
 * (`pg_current_xact_id()`), then the event's sequence in the log. Events are read in this order and
 * only once every transaction before the reader's snapshot horizon has ended (lib/data/event-feed.ts),
 * so a position never has an event appear behind it later, whatever order transactions commit in.
 */
export interface FeedPosition {
  xact: bigint;
  seq: bigint;
}

const PREFIX = 'ev1:';
/** Largest xid8 and bigint: a cursor past them names no event, and the database would fail on it (a 500). */
const MAX_XACT = 2n ** 64n - 1n;
const MAX_SEQ = 2n ** 63n - 1n;

/** The opaque cursor a client holds for a position. */
export function encodeCursor(position: FeedPosition): string {
  return Buffer.from(`${PREFIX}${position.xact}:${position.seq}`).toString('base64url');
}

/** The position a cursor names, or null when the text is no cursor of ours. */
export function decodeCursor(cursor: string): FeedPosition | null {
  if (cursor.length > 200) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^ev1:(\d{1,20}):(\d{1,20})$/.exec(text);
  if (!match) return null;
  const position = { xact: BigInt(match[1]), seq: BigInt(match[2]) };
  return position.xact <= MAX_XACT && position.seq <= MAX_SEQ ? position : null;
}

/** Negative, zero or positive as `a` stands before, at or after `b`. */
export function comparePositions(a: FeedPosition, b: FeedPosition): number {
  if (a.xact !== b.xact) return a.xact < b.xact ? -1 : 1;
  if (a.seq !== b.seq) return a.seq < b.seq ? -1 : 1;
  return 0;
}

/** The cursor of an event row read with its feed columns (`xact`, `seq`, as the database answers them). */
export function cursorOfRow(row: { xact?: string | null; seq?: string | null }): string {
  return encodeCursor({ xact: BigInt(row.xact ?? 0), seq: BigInt(row.seq ?? 0) });
}
