import { describe, expect, it } from '@jest/globals';
import type { Request } from 'express';
import { rateLimitHeaders } from '#lib/http/rate-limit.js';
import { cursorLinks, locationOf, pageLinks } from '#lib/rest/rest-headers.js';
import { linksOf } from '#test/support/links.js';

const requestFor = (originalUrl: string) => ({ originalUrl }) as Request;

describe('REST answer headers', () => {
  it('fills a Location from the answer, and gives none when a field is missing', () => {
    expect(locationOf('/api/contacts/{contactId}/notes/{id}', { id: 'n 1', contactId: 'c1' })).toBe(
      '/api/contacts/c1/notes/n%201',
    );
    expect(locationOf('/api/contacts/{id}', {})).toBeUndefined();
  });

  it('links pages: no prev on the first, no next on the last, no last when the total is an estimate', () => {
    const req = requestFor('/api/contacts?search=a%20b&page=1');
    expect(linksOf(pageLinks(req, { data: [], page: 1, limit: 10, total: 0 }) ?? null)).toEqual({
      first: '/api/contacts?search=a+b&page=1&limit=10',
      last: '/api/contacts?search=a+b&page=1&limit=10',
    });
    expect(
      Object.keys(linksOf(pageLinks(req, { data: [], page: 3, limit: 10, total: 25_000, totalExact: false }) ?? null)),
    ).toEqual(['first', 'prev', 'next']);
    // A page past the end points back to the last one there is.
    expect(linksOf(pageLinks(req, { data: [], page: 9, limit: 10, total: 15 }) ?? null).prev).toBe(
      '/api/contacts?search=a+b&page=2&limit=10',
    );
  });

  it('links the next items of a cursor list while there are more', () => {
    const req = requestFor('/api/content-ops/events?limit=5');
    expect(cursorLinks(req, { data: [], nextCursor: 'abc=' }, 'cursor')).toBe(
      '</api/content-ops/events?limit=5&cursor=abc%3D>; rel="next"',
    );
    expect(cursorLinks(req, { data: [], nextCursor: null }, 'cursor')).toBeUndefined();
  });

  it('writes RateLimit-Policy and RateLimit as structured-field lists, one member per policy', () => {
    const state = { policy: 'p', quota: 5, windowSeconds: 60, remaining: 4, resetSeconds: 59 };
    expect(rateLimitHeaders([state, { ...state, policy: 'q', quota: 9 }, { ...state, remaining: 3 }])).toEqual({
      'ratelimit-policy': '"p";q=5;w=60, "q";q=9;w=60',
      ratelimit: '"p";r=3;t=59, "q";r=4;t=59',
    });
    expect(rateLimitHeaders([])).toEqual({});
  });
});
