import { describe, expect, it } from '@jest/globals';
import { GraphQLError } from 'graphql';
import {
  AppError,
  ErrorCode,
  fieldProblemsFromMessage,
  formatGraphQLError,
  HTTP_STATUS,
  httpStatusOf,
  problemFor,
} from '#lib/errors.js';

describe('error model', () => {
  it('maps every code to its HTTP status', () => {
    expect(HTTP_STATUS).toMatchObject({
      UNAUTHENTICATED: 401,
      FORBIDDEN: 403,
      NOT_FOUND: 404,
      BAD_USER_INPUT: 400,
      CONFLICT: 409,
      PAYLOAD_TOO_LARGE: 413,
      RATE_LIMITED: 429,
    });
    for (const code of Object.values(ErrorCode)) expect(httpStatusOf(code)).toBe(HTTP_STATUS[code]);
    expect(httpStatusOf('GRAPHQL_VALIDATION_FAILED')).toBe(400);
    expect(httpStatusOf('SOMETHING_ELSE')).toBe(500);
  });

  it('builds RFC 9457 problem details', () => {
    expect(problemFor(ErrorCode.NOT_FOUND, 'Contact not found')).toEqual({
      type: '/problems/not-found',
      title: 'Not Found',
      status: 404,
      detail: 'Contact not found',
      code: 'NOT_FOUND',
    });
  });

  it('names the field of graphql-js variable errors', () => {
    expect(
      fieldProblemsFromMessage(
        'Variable "$input" got invalid value { a: 1 }; Field "shoeSize" is not defined by type "ContactInput".',
      ),
    ).toEqual([{ field: 'shoeSize', message: 'is not a known field' }]);
    expect(
      fieldProblemsFromMessage(
        'Variable "$input" got invalid value 5 at "input.firstName"; String cannot represent a non string value: 5',
      ),
    ).toEqual([{ field: 'firstName', message: 'String cannot represent a non string value: 5' }]);
    expect(
      fieldProblemsFromMessage('Variable "$page" got invalid value "x"; Int cannot represent non-integer value: "x"')[0]
        .field,
    ).toBe('page');
  });

  it('passes AppErrors through and masks everything else', () => {
    const logged: unknown[] = [];
    const known = new AppError(ErrorCode.CONFLICT, 'already approved', { details: { currentState: 'queued' } });
    const formattedKnown = formatGraphQLError(
      { message: known.message, extensions: { ...known.extensions } },
      known,
      (e) => logged.push(e),
    );
    expect(formattedKnown.extensions).toMatchObject({ code: 'CONFLICT', currentState: 'queued' });

    const internal = new GraphQLError('relation "contact" does not exist', {
      originalError: new Error('select * from contact'),
    });
    const formatted = formatGraphQLError(
      { message: internal.message, extensions: { code: 'INTERNAL_SERVER_ERROR', stacktrace: ['at x'] } },
      internal,
      (e) => logged.push(e),
    );
    expect(formatted.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR' });
    expect(formatted.message).not.toMatch(/contact|select/);
    expect(logged).toEqual([internal]);
  });

  it('keeps the name of the subgraph that failed when it masks its error', () => {
    const failed = new GraphQLError('connection terminated', { extensions: { serviceName: 'surveys' } });
    const formatted = formatGraphQLError(
      { message: failed.message, path: ['contacts', 'nodes', 0, 'surveys'], extensions: { serviceName: 'surveys' } },
      failed,
      () => {},
    );
    expect(formatted).toEqual({
      message: expect.not.stringContaining('connection') as unknown as string,
      path: ['contacts', 'nodes', 0, 'surveys'],
      extensions: { code: 'INTERNAL_SERVER_ERROR', serviceName: 'surveys' },
    });
  });
});
