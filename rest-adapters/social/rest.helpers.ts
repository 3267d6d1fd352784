import { queryText } from '../../lib/rest/rest.js';

/** A comma-separated query parameter as a list (`status=queued,failed`), or undefined when absent. */
export function listParam(value: unknown): string[] | undefined {
  if (value === undefined || value === '') return undefined;
  return queryText(value)
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
