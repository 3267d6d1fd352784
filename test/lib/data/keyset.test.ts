import { describe, expect, it } from '@jest/globals';
import { AppError } from '#lib/errors.js';
import { byCreation, cursorOf, keysetConnection, keysetSql, keysetWindow, type Keyset } from '#lib/data/keyset.js';

interface Item {
  id: string;
  createdAt: Date;
  scheduledAt?: Date | null;
}

const NEWEST_FIRST = byCreation<Item>('t', 'desc');
const item = (n: number): Item => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
});
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The input problem `read` throws, or undefined when it throws none. */
const problemOf = (read: () => unknown) => {
  try {
    read();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return (error as AppError).fields[0];
  }
};

describe('keyset paging', () => {
  it('writes a cursor as the key values of its item and reads it back as SQL parameters', () => {
    const cursor = cursorOf(NEWEST_FIRST, item(7));
    expect(JSON.parse(Buffer.from(cursor, 'base64url').toString())).toEqual(['2026-01-01T00:00:07.000Z', item(7).id]);
    const window = keysetWindow(NEWEST_FIRST, { first: 2, after: cursor });
    expect(window).toEqual({ size: 2, backward: false, after: [item(7).createdAt, item(7).id], before: null });
    expect(keysetSql(NEWEST_FIRST, window)).toEqual({
      conditions: [{ sql: '(t.created_at, t.id) < (?::timestamptz, ?::uuid)', params: window.after }],
      orderBy: [
        { sql: 't.created_at', direction: 'desc' },
        { sql: 't.id', direction: 'desc' },
      ],
      limit: 3,
    });
  });

  it('pages back with last/before: the order reversed in SQL, the page turned back', () => {
    const window = keysetWindow(NEWEST_FIRST, { last: 2, before: cursorOf(NEWEST_FIRST, item(3)) });
    const sql = keysetSql(NEWEST_FIRST, window);
    expect(sql.conditions[0].sql).toBe('(t.created_at, t.id) > (?::timestamptz, ?::uuid)');
    expect(sql.orderBy.map((order) => order.direction)).toEqual(['asc', 'asc']);
    // Read nearest the cursor first (4, 5), and one more (6): items come before this page.
    const page = keysetConnection(NEWEST_FIRST, window, [item(4), item(5), item(6)]);
    expect(page.nodes.map((node) => node.id)).toEqual([item(5).id, item(4).id]);
    expect(page.pageInfo).toEqual({
      hasNextPage: true,
      hasPreviousPage: true,
      startCursor: cursorOf(NEWEST_FIRST, item(5)),
      endCursor: cursorOf(NEWEST_FIRST, item(4)),
    });
    const first = keysetConnection(NEWEST_FIRST, keysetWindow(NEWEST_FIRST, { first: 2 }), [item(9), item(8)]);
    expect(first.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
  });

  it('sorts a missing time after every time, on both sides of the comparison', () => {
    const dueFirst: Keyset<Item> = {
      direction: 'asc',
      parts: [
        { column: 't.scheduled_at', kind: 'timeOrNever', of: (row) => row.scheduledAt },
        { column: 't.id', kind: 'id', of: (row) => row.id },
      ],
    };
    const unscheduled = { ...item(1), scheduledAt: null };
    const window = keysetWindow(dueFirst, { after: cursorOf(dueFirst, unscheduled) });
    expect(window.after).toEqual([null, item(1).id]);
    expect(keysetSql(dueFirst, window).conditions[0].sql).toBe(
      "(coalesce(t.scheduled_at, 'infinity'::timestamptz), t.id) > (coalesce(?::timestamptz, 'infinity'::timestamptz), ?::uuid)",
    );
  });

  it("refuses any cursor that is not a key of the list as the caller's mistake, naming its argument", () => {
    const uuid = item(1).id;
    for (const cursor of [
      'not-a-cursor',
      Buffer.from('o:5').toString('base64url'),
      encode(['2026-01-01T00:00:00.000Z']),
      encode(['2026-01-01T00:00:00.000Z', 'not-a-uuid']),
      encode(['+275760-09-13T00:00:00.000Z', uuid]),
      encode([null, uuid]),
      encode({ createdAt: '2026-01-01T00:00:00.000Z', id: uuid }),
    ]) {
      for (const argument of ['after', 'before'] as const) {
        expect({ cursor, problem: problemOf(() => keysetWindow(NEWEST_FIRST, { [argument]: cursor })) }).toEqual({
          cursor,
          problem: { field: argument, message: 'is not a cursor of this list' },
        });
      }
    }
    const bySequence: Keyset<{ seq: string }> = {
      direction: 'desc',
      parts: [{ column: 'e.seq', kind: 'sequence', of: (row) => row.seq }],
    };
    expect(problemOf(() => keysetWindow(bySequence, { after: encode(['9223372036854775808']) }))).toMatchObject({
      field: 'after',
    });
    expect(keysetWindow(bySequence, { after: encode(['9223372036854775807']) }).after).toEqual(['9223372036854775807']);
  });

  it('refuses first and last together, and sizes out of range', () => {
    expect(problemOf(() => keysetWindow(NEWEST_FIRST, { first: 2, last: 2 }))).toEqual({
      field: 'last',
      message: 'cannot be used with first: page forward with first/after, or back with last/before',
    });
    expect(problemOf(() => keysetWindow(NEWEST_FIRST, { last: 0 }))).toMatchObject({ field: 'last' });
    expect(problemOf(() => keysetWindow(NEWEST_FIRST, { first: 101 }))).toMatchObject({ field: 'first' });
    expect(keysetWindow(NEWEST_FIRST, { first: 1000 }, { maxSize: 1000 }).size).toBe(1000);
    expect(keysetWindow(NEWEST_FIRST, {}, { maxSize: 1000 }).size).toBe(1000);
    expect(keysetWindow(NEWEST_FIRST, {}).size).toBe(20);
  });
});
