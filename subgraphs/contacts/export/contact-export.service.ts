import { PassThrough, Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { crlfRecords, spreadsheetSafeSql } from '#lib/data/copy-csv.js';
import type { EntityManager, Orm } from '#lib/data/database.js';
import { dbQueryDuration } from '#lib/observability/metrics.js';
import { signPayload, verifyPayload, type Keys } from '#lib/secrets.js';
import { Contact } from '../contact/contact.entity.js';
import { contactSearchOf, searchParameters } from '../contact/contact.service.js';
import { contactQueries } from '../contact/contact.queries.js';

/** The columns of the export file, in order (the header row names them). */
export const EXPORT_COLUMNS = [
  'id',
  'firstName',
  'lastName',
  'email',
  'phone',
  'company',
  'tags',
  'createdAt',
  'updatedAt',
] as const;

/** Long enough for the REST adapter to open the stream right after it got the grant, short enough not to be kept. */
const GRANT_LIFETIME_MS = 60_000;
/** Rows per keyset page on embedded PGlite, which has no COPY stream. */
const EMBEDDED_PAGE_SIZE = 1000;

/** What an export grant carries, signed: the search (null: every live contact) and its expiry (ms). */
interface ExportGrantClaims {
  s: string | null;
  e: number;
}

export interface ContactExportSettings {
  /** Signs export grants; derived for this one purpose, so no other token of the platform passes as one. */
  /** Signs with the first, verifies with any (ENCRYPTION_KEY's rotation). */
  signingKey: Keys;
  /**
   * Connections for COPY on PostgreSQL, apart from the ORM's pool: an export holds its connection
   * for as long as the client reads, and must not take one the service's requests wait for. Null on
   * embedded PGlite.
   */
  copyPool: pg.Pool | null;
}

export interface ContactExportGrant {
  grant: string;
  expiresAt: Date;
}

/** Hands out grants to read an export; the bytes are served apart from GraphQL (contact-export.routes.ts). */
export class ContactExportService {
  constructor(private readonly settings: ContactExportSettings) {}

  grant(search: string | null | undefined): ContactExportGrant {
    const expiresAt = new Date(Date.now() + GRANT_LIFETIME_MS);
    const claims: ExportGrantClaims = { s: search || null, e: expiresAt.getTime() };
    return { grant: signPayload(this.settings.signingKey, claims), expiresAt };
  }
}

/** The search an export grant was given for, or null when the grant is forged, altered or expired. */
export function readExportGrant(settings: ContactExportSettings, grant: string): { search: string | null } | null {
  const claims = verifyPayload<ExportGrantClaims>(settings.signingKey, grant);
  if (!claims || typeof claims.e !== 'number' || claims.e < Date.now()) return null;
  if (claims.s !== null && typeof claims.s !== 'string') return null;
  return { search: claims.s };
}

/**
 * Writes the CSV export of the live contacts (matching `search`), newest first, to `out`: on
 * PostgreSQL one `COPY (SELECT ...) TO STDOUT` streamed as PostgreSQL sends it, on PGlite keyset
 * pages written through csv-stringify; the same bytes either way. Backpressure holds the COPY while
 * `out` is full; `out` closing early (the client went away) ends the COPY and drops its connection.
 */
export async function writeContactExport(
  orm: Orm,
  settings: ContactExportSettings,
  search: string | null,
  out: Writable,
): Promise<void> {
  const query = search ? contactSearchOf(search) : undefined;
  const select = exportSelect(orm.em, query === undefined ? 'all' : query === null ? 'none' : 'search');
  const searching = query ? searchParameters(query) : [];
  if (settings.copyPool) {
    // COPY takes no parameters: the search's values go into the text as literals, in order.
    let next = 0;
    const text = select.text.replace(/\?/g, () => pg.escapeLiteral(searching[next++]));
    if (next !== searching.length)
      throw new Error(`the export's select holds ${next} placeholders for ${searching.length} values`);
    return copyOut(orm, settings.copyPool, `copy (${text}) to stdout with (format csv, header)`, out);
  }
  return pagesOut(orm.em.fork(), select, searching, out);
}

/**
 * The export a grant names, as a stream, for a REST adapter in this process (no HTTP between them);
 * null when the grant is refused. Destroying the stream ends the COPY as a client going away does.
 */
export function contactExportStream(orm: Orm, settings: ContactExportSettings, grant: string): Readable | null {
  const granted = readExportGrant(settings, grant);
  if (!granted) return null;
  const out = new PassThrough();
  writeContactExport(orm, settings, granted.search, out).catch((error: Error) => out.destroy(error));
  return out;
}

interface ExportSelect {
  /** The select; `?` the search's `searchParameters` when searching. */
  text: string;
  /** The same, after a keyset (`?` created_at as text, id) and limited (`?` rows), for pages. */
  page: string;
}

/**
 * The export's select, each cell formatted as the file has it: empty for null or empty (NULL, which
 * COPY writes unquoted), tags joined with `;`, times as JavaScript's toISOString writes them, and
 * a cell a spreadsheet would run as a formula made text with a leading apostrophe (OWASP "CSV
 * injection", `spreadsheetSafeSql`: the rule every CSV the platform writes follows). Doing this in SQL keeps COPY's speed: Node only passes the bytes on.
 */
function exportSelect(em: EntityManager, matching: 'all' | 'none' | 'search'): ExportSelect {
  const meta = em.getMetadata(Contact);
  const column = (field: keyof Contact) => `c."${meta.properties[field].fieldNames[0]}"`;
  const cell = spreadsheetSafeSql;
  const time = (sql: string) => `to_char(${sql} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const cells: Record<(typeof EXPORT_COLUMNS)[number], string> = {
    id: `${column('id')}::text`,
    firstName: cell(column('firstName')),
    lastName: cell(column('lastName')),
    email: cell(column('email')),
    phone: cell(column('phone')),
    company: cell(column('company')),
    tags: cell(`array_to_string(${column('tags')}, ';')`),
    createdAt: time(column('createdAt')),
    updatedAt: time(column('updatedAt')),
  };
  const list = EXPORT_COLUMNS.map((name) => `${cells[name]} as "${name}"`).join(', ');
  const table = `"${meta.schema ?? 'contacts'}"."${meta.tableName}"`;
  const where = [
    `not ${column('deleted')}`,
    matching === 'search' ? contactQueries(em).matches : matching === 'none' ? 'false' : null,
  ].filter(Boolean);
  const keyset = `(${column('createdAt')}, ${column('id')})`;
  const order = `order by ${column('createdAt')} desc, ${column('id')} desc`;
  return {
    text: `select ${list} from ${table} as c where ${where.join(' and ')} ${order}`,
    page:
      `select ${list}, ${column('createdAt')}::text as "keyAt", ${column('id')} as "keyId" from ${table} as c ` +
      `where ${[...where, `${keyset} < (?::timestamptz, ?::uuid)`].join(' and ')} ${order} limit ?`,
  };
}

/** One COPY on a connection of the export pool, its LFs turned into CRLFs on the way (lib/data/copy-csv.ts). */
async function copyOut(orm: Orm, pool: pg.Pool, sql: string, out: Writable): Promise<void> {
  const client = await pool.connect();
  // A connection cut by the server mid-COPY reports here as well as on the stream; the stream's error is the one thrown.
  const ignore = () => undefined;
  client.on('error', ignore);
  const started = Date.now();
  const stop = dbQueryDuration.startTimer({ service: 'contacts', statement: 'other' });
  let broken: Error | undefined;
  try {
    await pipeline(client.query(copyTo(sql)), crlfRecords(), out);
    stop({ outcome: 'ok' });
  } catch (error) {
    stop({ outcome: 'error' });
    broken = error as Error;
    throw error;
  } finally {
    client.off('error', ignore);
    // A COPY stopped half way leaves the connection mid-protocol: it is closed, not reused, and
    // PostgreSQL ends the statement when the socket goes.
    client.release(broken);
    orm.config.getLogger().logQuery({ query: sql, took: Date.now() - started, level: broken ? 'error' : 'info' });
  }
}

type ExportRow = Record<(typeof EXPORT_COLUMNS)[number], string | null> & { keyAt: string; keyId: string };

/** Keyset pages of the same select, written through csv-stringify with the same quoting and CRLF. */
async function pagesOut(em: EntityManager, select: ExportSelect, searching: string[], out: Writable): Promise<void> {
  async function* rows() {
    // Past the newest possible row: the first page starts at the top.
    let after: [string, string] = ['infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff'];
    for (;;) {
      const page = await em.execute<ExportRow[]>(select.page, [...searching, ...after, EMBEDDED_PAGE_SIZE]);
      yield* page;
      if (page.length < EMBEDDED_PAGE_SIZE) return;
      const last = page[page.length - 1];
      after = [last.keyAt, last.keyId];
    }
  }
  const csv = stringify({ header: true, columns: [...EXPORT_COLUMNS], record_delimiter: '\r\n' });
  await pipeline(Readable.from(rows()), csv, out);
}
