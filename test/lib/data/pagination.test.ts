import { describe, expect, it } from '@jest/globals';
import { AppError } from '#lib/errors.js';
import { pageBody, timeOfCursor, toPage, windowOfPage } from '#lib/data/pagination.js';

describe('pagination', () => {
  it('turns pages into windows and back', () => {
    expect(windowOfPage({})).toEqual({ offset: 0, limit: 20 });
    const window = windowOfPage({ page: 3, limit: 10 });
    expect(window).toEqual({ offset: 20, limit: 10 });
    expect(toPage({ items: ['a'], total: 21 }, window)).toEqual({
      items: ['a'],
      page: 3,
      limit: 10,
      total: 21,
      totalExact: true,
    });
  });

  it('flags an estimated total in the REST page body, and only then', () => {
    const window = windowOfPage({ page: 1, limit: 1 });
    expect(pageBody(toPage({ items: ['a'], total: 21 }, window))).toEqual({
      data: ['a'],
      page: 1,
      limit: 1,
      total: 21,
    });
    expect(pageBody(toPage({ items: ['a'], total: 25_000, totalExact: false }, window))).toEqual({
      data: ['a'],
      page: 1,
      limit: 1,
      total: 25_000,
      totalExact: false,
    });
  });

  it('rejects out-of-range pages and sizes naming the argument', () => {
    for (const [args, field] of [
      [{ page: 0 }, 'page'],
      [{ limit: 101 }, 'limit'],
      [{ limit: 0 }, 'limit'],
    ] as const) {
      try {
        windowOfPage(args);
        throw new Error('accepted');
      } catch (error) {
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).fields[0].field).toBe(field);
      }
    }
  });

  /** The input problem `read` throws, or undefined when it throws none. */
  const problemOf = (read: () => unknown) => {
    try {
      read();
      return undefined;
    } catch (error) {
      return (error as AppError).fields[0];
    }
  };
  const notACursor = { field: 'after', message: 'is not a cursor of this list' };

  it('reads the time of a keyset cursor only as toISOString writes it', () => {
    const now = new Date();
    expect(timeOfCursor(now.toISOString())).toEqual(now);
    for (const value of [
      '+275760-09-13T00:00:00.000Z',
      '-271821-04-20T00:00:00.000Z',
      '0000-01-01T00:00:00.000Z',
      '2026-13-01T00:00:00.000Z',
      '2026-02-30T00:00:00.000Z',
      '2026-01-01',
      'now',
      1_700_000_000_000,
      null,
    ]) {
      expect({ value, problem: problemOf(() => timeOfCursor(value)) }).toEqual({ value, problem: notACursor });
    }
  });
});
