import type { EntityManager } from '../../lib/data/database.js';
import { Contact } from './contact.entity.js';
import { EDITABLE_FIELDS } from './contact.input.js';

/** Every column a contact is read with, by property name (never the search vector, the widest column). */
export const READ_FIELDS = [
  'id',
  ...EDITABLE_FIELDS,
  'deleted',
  'deletedAt',
  'createdAt',
  'updatedAt',
  'version',
] as const;

/**
 * The SQL of the hot reads (a contact by id, a page of the list or of a search, their totals),
 * written once per schema. A query builder would build the same text again on every request, which
 * cost more CPU than PostgreSQL spent answering it; a fixed text also stays one prepared statement.
 * Placeholders are MikroORM's `?`, sent as bind parameters (lib/data/postgresql.ts).
 */
export interface ContactQueries {
  /** One live contact; `?` the id. */
  byId: string;
  /** Live contacts, to continue with ` and ` conditions and an order (a keyset page). */
  live: string;
  /** The condition of a prefix query over the search vector; `?` the query text. */
  matches: string;
  /** A page of live contacts, newest first; `?` limit, offset. */
  page: string;
  /** A page of the live contacts matching a prefix query; `?` the query text, limit, offset. */
  searchPage: string;
  /** The live count the triggers keep (migration ContactCount). */
  liveTotal: string;
  /**
   * `total`, `exact` and the planner's `estimate` of a search (migrations ContactSearchTotal and
   * ContactSearchEstimate); `?` the query text, the exact-count limit, the estimate already known (or null).
   */
  searchTotal: string;
}

const bySchema = new Map<string, ContactQueries>();

export function contactQueries(em: EntityManager): ContactQueries {
  const meta = em.getMetadata(Contact);
  const schema = meta.schema ?? 'contacts';
  let queries = bySchema.get(schema);
  if (!queries) {
    const table = `"${schema}"."${meta.tableName}"`;
    const columns = READ_FIELDS.map((field) => `c."${meta.properties[field].fieldNames[0]}" as "${field}"`).join(', ');
    const matches = `c.search_vector @@ to_tsquery('simple', ?)`;
    const newestFirst = 'order by c.created_at desc, c.id desc limit ? offset ?';
    queries = {
      byId: `select ${columns} from ${table} as c where c.id = ? and not c.deleted`,
      live: `select ${columns} from ${table} as c where not c.deleted`,
      matches,
      page: `select ${columns} from ${table} as c where not c.deleted ${newestFirst}`,
      searchPage: `select ${columns} from ${table} as c where not c.deleted and ${matches} ${newestFirst}`,
      liveTotal: `select live as total from "${schema}"."contact_live_count"`,
      searchTotal: `select total, exact, estimate from "${schema}"."contact_search_total"(to_tsquery('simple', ?), ?, ?::bigint)`,
    };
    bySchema.set(schema, queries);
  }
  return queries;
}
