import { parseInstant } from '../time.js';

/**
 * The graph types instants as `DateTimeISO` (RFC 3339); the legacy REST bodies accept any ISO 8601
 * time with a zone (`2031-05-01T09:00+02:00`, `...+0200`) and must keep doing so. The adapter reads
 * such a time as the service always did (`parseInstant`: a 400 naming the field when it is none) and
 * hands the graph the instant it names. `null` (clear the time) and absent fields pass as they came.
 */
export function withIsoInstants(body: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  const converted = { ...body };
  for (const key of keys) {
    const value = body[key];
    if (typeof value === 'string') converted[key] = isoInstant(value, key);
  }
  return converted;
}

/** One REST time as the graph's `DateTimeISO`; anything but text is passed on for GraphQL to refuse by name. */
export function isoInstant(value: unknown, field: string): unknown {
  return typeof value === 'string' ? parseInstant(value, field).toISOString() : value;
}
