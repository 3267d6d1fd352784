import { AppError } from './errors.js';

const formatters = new Map<string, Intl.DateTimeFormat>();

/** A formatter that prints the calendar date of an instant in an IANA zone as YYYY-MM-DD. */
function dateFormatter(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** The canonical name of an IANA zone, or a BAD_USER_INPUT naming `field`. */
export function checkTimezone(timezone: string, field = 'timezone'): string {
  try {
    const canonical = new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
    // Intl also takes offsets like "+01:00"; the contract asks for IANA names.
    if (!/^[A-Za-z]/.test(timezone)) throw new Error('not an IANA name');
    return canonical === 'Etc/UTC' || canonical === 'Etc/GMT' ? 'UTC' : canonical;
  } catch {
    throw AppError.badInput(field, 'must be an IANA time zone such as Europe/Berlin');
  }
}

export function localDateOf(instant: Date, timezone: string): string {
  return dateFormatter(timezone).format(instant);
}

/** Parses a calendar date `YYYY-MM-DD` (a real one: no 31 February), or BAD_USER_INPUT naming `field`. */
export function checkCalendarDate(value: string, field: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
  if (!date || date.toISOString().slice(0, 10) !== value)
    throw AppError.badInput(field, 'must be a calendar date YYYY-MM-DD');
  return value;
}

/** Every calendar date from `from` to `to`, both included. */
export function datesBetween(from: string, to: string): string[] {
  const dates: string[] = [];
  for (
    let day = new Date(`${from}T00:00:00Z`);
    day.toISOString().slice(0, 10) <= to;
    day.setUTCDate(day.getUTCDate() + 1)
  ) {
    dates.push(day.toISOString().slice(0, 10));
  }
  return dates;
}

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * A point in time from an ISO 8601 timestamp that states its zone (`Z` or an offset). Timestamps
 * arrive as text rather than as a custom scalar so a bad one is a BAD_USER_INPUT naming the field
 * (the gateway cannot check a scalar only the subgraph knows). `undefined` stays `undefined`
 * (field omitted) and null stays null (field cleared).
 */
export function parseInstant<T extends string | null | undefined>(
  value: T,
  field: string,
): T extends string ? Date : T {
  if (value === undefined || value === null) return value as never;
  const time = INSTANT.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(time))
    throw AppError.badInput(field, 'must be an ISO 8601 timestamp with a zone, e.g. 2030-01-31T09:00:00+01:00');
  return new Date(time) as never;
}
