import { z } from 'zod';
import { AppError, ErrorCode, type FieldProblem } from '../errors.js';

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
};

/** A zod issue as the platform's field problems, in the words GraphQL's input errors get (lib/errors.ts). */
function fieldProblemsOf(issue: z.core.$ZodIssue, body: unknown): FieldProblem[] {
  const at = (key?: PropertyKey) =>
    [...issue.path, ...(key === undefined ? [] : [key])].map(String).join('.') || 'body';
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ field: at(key), message: 'is not a known field' }));
    case 'invalid_type':
      return [
        {
          field: at(),
          message:
            valueAt(body, issue.path) === undefined
              ? 'is required'
              : `must be ${EXPECTED[issue.expected] ?? issue.expected}`,
        },
      ];
    case 'invalid_value':
      return [{ field: at(), message: `must be one of ${issue.values.map(String).join(', ')}` }];
    default:
      return [{ field: at(), message: issue.message }];
  }
}

/** The value at `path` of a parsed JSON body (zod's issues do not carry it unless asked to). */
function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let value = body;
  for (const key of path)
    value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/**
 * A request body of the route's documented shape, or BAD_USER_INPUT naming every field that is not:
 * of the wrong type, missing though required, or unknown to the route. Only shape and types are
 * checked here; what a value may be (an e-mail address, a date in the future) is the subgraph's rule.
 */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const fields = result.error.issues.flatMap((issue) => fieldProblemsOf(issue, body));
  throw new AppError(
    ErrorCode.BAD_USER_INPUT,
    `Invalid input: ${fields.map(({ field, message }) => `${field} ${message}`).join('; ')}`,
    { fields },
  );
}

/**
 * The body that writes a resource: its writable `fields`, and none other (an unknown field is
 * refused, naming it), except the fields the service sets itself (`id`, `createdAt`...), which a
 * client may send back as it read them: they are documented as read-only and dropped here.
 */
export function inputOf<Fields extends z.ZodRawShape>(resource: z.ZodObject, fields: Fields) {
  const readOnly = Object.keys(resource.shape).filter((key) => !(key in fields));
  const ignored = Object.fromEntries(
    readOnly.map((key) => [
      key,
      z
        .unknown()
        .optional()
        .meta({ readOnly: true, description: 'Set by the service: may be sent back as read, and is ignored' }),
    ]),
  );
  return z.strictObject({ ...fields, ...ignored }).transform((body) => {
    const written: Record<string, unknown> = { ...body };
    for (const key of readOnly) delete written[key];
    return written as z.output<z.ZodObject<Fields>>;
  });
}
