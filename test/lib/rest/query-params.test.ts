import { describe, expect, it } from '@jest/globals';
import { numberParam, queryText, stringParam } from '#lib/rest/rest.js';

describe('query parameters as text', () => {
  it('keeps text, joins repeated parameters and shows a bracketed one as JSON, never as [object Object]', () => {
    expect(queryText('queued')).toBe('queued');
    expect(queryText(['queued', 'failed'])).toBe('queued,failed');
    expect(queryText({ a: '1' })).toBe('{"a":"1"}');
    expect(numberParam('20')).toBe(20);
    expect(numberParam({ a: '1' })).toBe('{"a":"1"}');
    expect(stringParam(['first', 'second'])).toBe('first');
    expect(stringParam({ a: '1' })).toBe('{"a":"1"}');
  });
});
