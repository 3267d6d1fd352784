import { describe, expect, it } from '@jest/globals';
import { AppError } from '#lib/errors.js';
import { findUnstorableText, MAX_JSON_NESTING, refuseDeepJson } from '#lib/http/input.js';

const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

/** The field and message of the input error `check` throws, or undefined when it throws none. */
function refusal(check: () => void): { field: string; message: string } | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return (error as AppError).fields[0];
  }
}

describe('findUnstorableText', () => {
  it('walks a value nested far deeper than the call stack goes', () => {
    const deep = JSON.parse(nested(500_000)) as unknown;
    expect(findUnstorableText(deep, '')).toBeUndefined();
    let bottom: unknown = ['a\u0000'];
    for (let level = 0; level < 200_000; level++) bottom = [bottom];
    expect(findUnstorableText(bottom, 'tags')?.fields[0]).toEqual({
      field: `tags${'[0]'.repeat(200_001)}`,
      message: expect.stringContaining('NUL'),
    });
  });

  it('names the first problem in reading order, field names included', () => {
    const value = { a: ['fine', 'x\u0000'], b: { 'bad\u0000key': 1 }, c: '\ud800' };
    expect(findUnstorableText(value, '')?.fields[0]).toEqual({
      field: 'a[1]',
      message: expect.stringContaining('NUL'),
    });
    expect(findUnstorableText({ a: 'fine', b: { 'bad\u0000key': 1 }, c: '\ud800' }, 'input')?.fields[0]).toEqual({
      field: 'input.b',
      message: expect.stringMatching(/^field names must not contain a NUL/),
    });
    expect(findUnstorableText({ a: 'fine', c: '\ud800' }, '')?.fields[0].field).toBe('c');
    expect(findUnstorableText('\u0000', '')?.fields[0].field).toBe('body');
    expect(findUnstorableText({ ok: [1, null, true, 'text'] }, '')).toBeUndefined();
  });
});

describe('refuseDeepJson', () => {
  const tooDeep = { field: 'body', message: `nests arrays and objects deeper than ${MAX_JSON_NESTING} levels` };

  it(`takes nesting up to ${MAX_JSON_NESTING} levels and refuses one more, arrays and objects alike`, () => {
    expect(refusal(() => refuseDeepJson(Buffer.from(nested(MAX_JSON_NESTING))))).toBeUndefined();
    expect(refusal(() => refuseDeepJson(Buffer.from(nested(MAX_JSON_NESTING + 1))))).toEqual(tooDeep);
    const objects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    expect(refusal(() => refuseDeepJson(Buffer.from(objects(MAX_JSON_NESTING))))).toBeUndefined();
    expect(refusal(() => refuseDeepJson(Buffer.from(`[${objects(MAX_JSON_NESTING)}]`)))).toEqual(tooDeep);
    // A megabyte of `[`: refused at the first bracket too many, without reading on.
    expect(refusal(() => refuseDeepJson(Buffer.alloc(1024 * 1024, '[')))).toEqual(tooDeep);
  });

  it('counts depth, not brackets: siblings, and brackets inside strings, do not add up', () => {
    const siblings = `[${Array.from({ length: 1000 }, () => nested(MAX_JSON_NESTING - 1)).join(',')}]`;
    expect(refusal(() => refuseDeepJson(Buffer.from(siblings)))).toBeUndefined();
    const inStrings = JSON.stringify({ text: '['.repeat(1000), quoted: 'say \\"[[[[" then {{{{', é: '[[[[' });
    expect(refusal(() => refuseDeepJson(Buffer.from(inStrings)))).toBeUndefined();
    // An escaped quote does not end the string, so the brackets after it are still text.
    const escaped = JSON.stringify({ text: `"${'['.repeat(MAX_JSON_NESTING + 1)}` });
    expect(refusal(() => refuseDeepJson(Buffer.from(escaped)))).toBeUndefined();
  });
});
