import { raw } from '@mikro-orm/core';
import type { QueryBuilder } from '@mikro-orm/sql';
import { AppError } from '../errors.js';
import { isUuid } from '../ids.js';
import { checkSize, notACursor, timeOfCursor, type Connection, type PageInfo } from './pagination.js';

/**
 * Keyset paging, the one way every GraphQL connection walks its list. A cursor holds the sort key
 * of its item (the sort values, then the id) instead of a position, and the next page starts with
 * a row comparison against it: `(created_at, id) < ($1, $2)`. An item created or deleted meanwhile
 * moves no other item's key, so a walk never repeats or skips an item that was there when it began
 * (an offset would shift by one for each of them), and a page costs an index range scan however
 * deep it lies. MikroORM's `findByCursor` does the same walk, but spells the comparison as a chain
 * of OR branches and does not check a decoded cursor value against its column's type, so a forged
 * cursor would fail in PostgreSQL (a 500) instead of being refused as the caller's mistake.
 */

/** What a cursor may hold for one part of a key, and how the part is compared in SQL. */
export type KeyKind =
  /** A timestamptz column. */
  | 'time'
  /** A timestamptz column that may be null, null sorting after every time (`nulls last` ascending). */
  | 'timeOrNever'
  /** A uuid column: the id that makes every key unique. */
  | 'id'
  /** A boolean column, true sorting first in the list's direction (a default before the others). */
  | 'trueFirst'
  /** A bigint column (a sequence). */
  | 'sequence';

export interface KeyPart<T> {
  /** The column, or an SQL expression over the query's alias (`p.created_at`). */
  column: string;
  kind: KeyKind;
  /** The part's value on an item as read. */
  of(item: T): Date | string | number | boolean | null | undefined;
}

/**
 * How a list is ordered: its key parts, the id last, all in one direction (which a row comparison
 * needs; a part that runs against it is written as a `trueFirst` or an expression).
 */
export interface Keyset<T> {
  parts: readonly KeyPart<T>[];
  direction: 'asc' | 'desc';
}

/** The paging arguments of every connection (Relay): `first`/`after` forward, `last`/`before` back. */
export interface KeysetArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** A page asked for, its arguments checked and its cursors decoded into SQL parameters. */
export interface KeysetWindow {
  size: number;
  /** True for `last`: the page is read in reverse from its end, then turned back. */
  backward: boolean;
  after: unknown[] | null;
  before: unknown[] | null;
}

/** Largest bigint: a sequence cursor past it names no item, and the database would fail on it. */
const MAX_SEQUENCE = 2n ** 63n - 1n;

/** Per kind: the SQL of a part and of its parameter, the cursor value of an item, and the check of a cursor value. */
const KINDS: Record<
  KeyKind,
  {
    sql(column: string): string;
    param: string;
    write(value: unknown): unknown;
    /** The SQL parameter for a cursor value, or undefined when the value cannot be one of this kind. */
    read(value: unknown): unknown;
  }
> = {
  time: {
    sql: (column) => column,
    param: '?::timestamptz',
    write: (value) => (value as Date).toISOString(),
    read: (value) => timeOrUndefined(value),
  },
  timeOrNever: {
    // A missing time sorts as 'infinity' on both sides, so the row comparison holds across the nulls too.
    sql: (column) => `coalesce(${column}, 'infinity'::timestamptz)`,
    param: `coalesce(?::timestamptz, 'infinity'::timestamptz)`,
    write: (value) => (value instanceof Date ? value.toISOString() : null),
    read: (value) => (value === null ? null : timeOrUndefined(value)),
  },
  id: {
    sql: (column) => column,
    param: '?::uuid',
    write: (value) => value,
    read: (value) => (isUuid(value) ? value : undefined),
  },
  trueFirst: {
    sql: (column) => `(not ${column})`,
    param: '(not ?::boolean)',
    write: (value) => Boolean(value),
    read: (value) => (typeof value === 'boolean' ? value : undefined),
  },
  sequence: {
    sql: (column) => column,
    param: '?::bigint',
    write: (value) => String(value),
    read: (value) =>
      typeof value === 'string' && /^\d{1,19}$/.test(value) && BigInt(value) <= MAX_SEQUENCE ? value : undefined,
  },
};

function timeOrUndefined(value: unknown): Date | undefined {
  try {
    return timeOfCursor(value);
  } catch {
    return undefined;
  }
}

/** The cursor of an item: its key values as a JSON array, base64url. */
export function cursorOf<T>(keyset: Keyset<T>, item: T): string {
  const values = keyset.parts.map((part) => KINDS[part.kind].write(part.of(item)));
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

function decodeCursor<T>(keyset: Keyset<T>, cursor: string, argument: 'after' | 'before'): unknown[] {
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw notACursor(argument);
  }
  if (!Array.isArray(values) || values.length !== keyset.parts.length) throw notACursor(argument);
  return keyset.parts.map((part, index) => {
    const param = KINDS[part.kind].read(values[index]);
    if (param === undefined) throw notACursor(argument);
    return param;
  });
}

/**
 * Checks a connection's arguments (before any query runs) and decodes its cursors. `first` and
 * `last` together would ask for two pages at once: refused. `maxSize` raises the page size limit
 * for a list that allows more (an export's walk).
 */
export function keysetWindow<T>(
  keyset: Keyset<T>,
  args: KeysetArgs,
  options: { defaultSize?: number; maxSize?: number } = {},
): KeysetWindow {
  return {
    ...pageSizeOf(args, options),
    after: args.after ? decodeCursor(keyset, args.after, 'after') : null,
    before: args.before ? decodeCursor(keyset, args.before, 'before') : null,
  };
}

/**
 * The size and direction a connection's arguments ask for, checked: the part of `keysetWindow` that
 * does not depend on what its cursors hold, for a list whose cursors are not keyset cursors (an event
 * feed's: lib/data/event-feed.ts).
 */
export function pageSizeOf(
  args: KeysetArgs,
  options: { defaultSize?: number; maxSize?: number } = {},
): Pick<KeysetWindow, 'size' | 'backward'> {
  const hasLast = args.last !== undefined && args.last !== null;
  if (hasLast && args.first !== undefined && args.first !== null) {
    throw AppError.badInput(
      'last',
      'cannot be used with first: page forward with first/after, or back with last/before',
    );
  }
  const field = hasLast ? 'last' : 'first';
  return { size: sizeOf(field, hasLast ? args.last : args.first, options), backward: hasLast };
}

function sizeOf(
  field: string,
  size: number | null | undefined,
  options: { defaultSize?: number; maxSize?: number },
): number {
  if (!options.maxSize) return checkSize(field, size);
  if (size === undefined || size === null) return options.defaultSize ?? options.maxSize;
  if (!Number.isInteger(size) || size < 1 || size > options.maxSize) {
    throw AppError.badInput(field, `must be an integer from 1 to ${options.maxSize}`);
  }
  return size;
}

/** The SQL of a keyset page: conditions to add (with their parameters), the order, and how many rows to read. */
export interface KeysetSql {
  conditions: { sql: string; params: unknown[] }[];
  orderBy: { sql: string; direction: 'asc' | 'desc' }[];
  /** One more than the page: the extra row only tells whether more follow. */
  limit: number;
}

export function keysetSql<T>(keyset: Keyset<T>, window: KeysetWindow): KeysetSql {
  const row = `(${keyset.parts.map((part) => KINDS[part.kind].sql(part.column)).join(', ')})`;
  const params = `(${keyset.parts.map((part) => KINDS[part.kind].param).join(', ')})`;
  const later = keyset.direction === 'asc' ? '>' : '<';
  const earlier = keyset.direction === 'asc' ? '<' : '>';
  const conditions: KeysetSql['conditions'] = [];
  if (window.after) conditions.push({ sql: `${row} ${later} ${params}`, params: window.after });
  if (window.before) conditions.push({ sql: `${row} ${earlier} ${params}`, params: window.before });
  const reversed = keyset.direction === 'asc' ? 'desc' : 'asc';
  const direction = window.backward ? reversed : keyset.direction;
  return {
    conditions,
    orderBy: keyset.parts.map((part) => ({ sql: KINDS[part.kind].sql(part.column), direction })),
    limit: window.size + 1,
  };
}

/** `KeysetSql`'s order as an SQL `order by` list. */
export function orderByText(sql: KeysetSql): string {
  return sql.orderBy.map((order) => `${order.sql} ${order.direction}`).join(', ');
}

/** A connection without its total, for a list that does not count (counting would cost each page a scan). */
export type KeysetConnection<T> = Omit<Connection<T>, 'totalCount' | 'totalExact'>;

/**
 * The page out of the rows a keyset query read (up to `limit`, in the query's order): the extra
 * row dropped, a backward page turned back into the list's order, and the Relay page info.
 */
export function keysetConnection<T>(keyset: Keyset<T>, window: KeysetWindow, rows: readonly T[]): KeysetConnection<T>;
/** The same, when a row carries its key beside the node it answers (`nodeOf`). */
export function keysetConnection<Row, T>(
  keyset: Keyset<Row>,
  window: KeysetWindow,
  rows: readonly Row[],
  nodeOf: (row: Row) => T,
): KeysetConnection<T>;
export function keysetConnection<Row, T>(
  keyset: Keyset<Row>,
  window: KeysetWindow,
  rows: readonly Row[],
  nodeOf: (row: Row) => T = (row) => row as unknown as T,
): KeysetConnection<T> {
  const more = rows.length > window.size;
  const page = rows.slice(0, window.size);
  if (window.backward) page.reverse();
  const head = page[0];
  const tail = page.at(-1);
  const pageInfo: PageInfo = {
    hasNextPage: window.backward ? window.before !== null : more,
    hasPreviousPage: window.backward ? more : window.after !== null,
    startCursor: head === undefined ? null : cursorOf(keyset, head),
    endCursor: tail === undefined ? null : cursorOf(keyset, tail),
  };
  return {
    // A cursor per edge only when edges are asked for: an export reads a thousand nodes and the end cursor.
    get edges() {
      return page.map((row) => ({ cursor: cursorOf(keyset, row), node: nodeOf(row) }));
    },
    nodes: page.map(nodeOf),
    pageInfo,
  };
}

/**
 * One keyset page of a MikroORM query (its filter already set), with the total of the whole list
 * counted by `count` at the same time: what every connection over entities answers.
 */
export async function pageOfQuery<T extends object>(
  qb: QueryBuilder<T>,
  keyset: Keyset<T>,
  window: KeysetWindow,
  count: () => Promise<number>,
): Promise<Connection<T>> {
  const sql = keysetSql(keyset, window);
  for (const condition of sql.conditions) qb.andWhere(condition.sql, condition.params);
  qb.orderBy(sql.orderBy.map((order) => ({ [raw(order.sql)]: order.direction })) as never).limit(sql.limit);
  const [rows, total] = await Promise.all([qb.getResultList(), count()]);
  return { ...keysetConnection(keyset, window, rows), totalCount: total, totalExact: true };
}

/** The key of a list ordered by creation time (then id), the order most lists have. */
export function byCreation<T extends { createdAt: Date; id: string }>(
  alias: string,
  direction: 'asc' | 'desc',
): Keyset<T> {
  return {
    direction,
    parts: [
      { column: `${alias}.created_at`, kind: 'time', of: (item) => item.createdAt },
      { column: `${alias}.id`, kind: 'id', of: (item) => item.id },
    ],
  };
}

/** The answer of a list whose filter matches nothing (a brand out of reach): no query needed. */
export function emptyConnection<T>(): Connection<T> {
  const pageInfo = { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null };
  return { edges: [], nodes: [], pageInfo, totalCount: 0, totalExact: true };
}
