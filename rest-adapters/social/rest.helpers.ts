import type { Request } from 'express';
import { jsonBody, queryText } from '../../lib/rest.js';

/**
 * The fields of a JSON body that an operation's input takes. Legacy clients often send a whole
 * resource back (id, createdAt...); fields the input does not know are left out rather than refused.
 */
export function pickBody(req: Request, fields: readonly string[]): Record<string, unknown> {
  const body = jsonBody(req);
  const picked: Record<string, unknown> = {};
  for (const field of fields) if (field in body) picked[field] = body[field];
  return picked;
}

/** A comma-separated query parameter as a list (`status=queued,failed`), or undefined when absent. */
export function listParam(value: unknown): string[] | undefined {
  if (value === undefined || value === '') return undefined;
  return queryText(value)
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
