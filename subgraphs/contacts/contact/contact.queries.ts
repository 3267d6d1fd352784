import type { EntityManager } from '#lib/data/database.js';
import { Contact } from './contact.entity.js';
import { EDITABLE_FIELDS } from './contact.input.js';

/** Every column a contact is read with, by property name (never the search vector, the widest column). */
export const READ_FIELDS = [
  'id',
  ...EDITABLE_FIELDS,
  'deleted',
  'deletedAt',
  'mergedInto',
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
  /** One live or merged contact; `?` the id. */
  byId: string;
  /** Live contacts, to continue with ` and ` conditions and an order (a keyset page). */
  live: string;
  /** The condition of a search over the search vector; `?` its `searchParameters`. */
  matches: string;
  /** A page of live contacts, newest first; `?` limit, offset. */
  page: string;
  /** A page of the live contacts matching a search; `?` its `searchParameters`, limit, offset. */
  searchPage: string;
  /** The live count the triggers keep (migration ContactCount). */
  liveTotal: string;
  /**
   * `total`, `exact` and the planner's `estimate` of a search (migrations ContactSearchTotal and
   * ContactSearchEstimate); `?` its `searchParameters`, the exact-count limit, the estimate already known (or null).
   */
  searchTotal: string;
  /** A new contact and its CREATED event in one statement; `?` what `insertValues` gives. */
  insert: string;
  /**
   * The change of a live contact and its UPDATED event in one statement, answering the changed row or none; `?` what
   * `updateValues` gives. It changes nothing (and answers no row) for an unknown or deleted id, another
   * version than the one asked for, or a change that would leave the contact without a first name and
   * an e-mail address.
   */
  update: string;
}

/** The columns a new contact is written with, in the order of `ContactQueries.insert`'s values. */
const INSERT_FIELDS = ['id', ...EDITABLE_FIELDS, 'deleted', 'createdAt', 'updatedAt'] as const;

type EditableField = (typeof EDITABLE_FIELDS)[number];

/**
 * The values of `ContactQueries.insert` for a new contact, in its order. `tags` goes as a JSON list:
 * an array value would be read as a list of placeholders (`in (?)`).
 */
export function insertValues(contact: Contact): unknown[] {
  return INSERT_FIELDS.map((field) => (field === 'tags' ? JSON.stringify(contact.tags) : contact[field]));
}

/**
 * The values of `ContactQueries.update`, in its order: for each editable field whether `changes` gives
 * it and its value, the time of the change (Node's clock, as a create's times and the entity manager's
 * `onUpdate`), the id, the version asked for, then the first name's and the e-mail's again (for the
 * identity condition). `changes` holds the given fields only, as `ContactService.apply` sets them.
 */
export function updateValues(
  id: string,
  changes: Partial<Pick<Contact, EditableField>>,
  ifVersion: number | null | undefined,
): unknown[] {
  const setOrKeep = (field: EditableField) => [
    field in changes,
    field === 'tags' ? JSON.stringify(changes.tags ?? []) : (changes[field] ?? null),
  ];
  return [
    ...EDITABLE_FIELDS.flatMap(setOrKeep),
    new Date(),
    id,
    ifVersion ?? null,
    ifVersion ?? null,
    ...setOrKeep('firstName'),
    ...setOrKeep('email'),
  ];
}

const bySchema = new Map<string, ContactQueries>();

export function contactQueries(em: EntityManager): ContactQueries {
  const meta = em.getMetadata(Contact);
  const schema = meta.schema ?? 'contacts';
  let queries = bySchema.get(schema);
  if (!queries) {
    const table = `"${schema}"."${meta.tableName}"`;
    const events = `"${schema}"."contact_event"`;
    const columns = READ_FIELDS.map((field) => `c."${meta.properties[field].fieldNames[0]}" as "${field}"`).join(', ');
    const column = (field: keyof Contact) => `"${meta.properties[field].fieldNames[0]}"`;
    const tagsOf = (json: string) => `array(select jsonb_array_elements_text(${json}::jsonb))`;
    const insertPlaceholders = INSERT_FIELDS.map((field) => (field === 'tags' ? tagsOf('?') : '?'));
    const setOrKeep = (field: EditableField) =>
      `case when ? then ${field === 'tags' ? tagsOf('?') : '?'} else c.${column(field)} end`;
    const assignments = EDITABLE_FIELDS.map((field) => `${column(field)} = ${setOrKeep(field)}`).join(', ');
    // Called with the values themselves (not in a subquery): PostgreSQL makes the tsquery while it plans,
    // and sees how many contacts it matches. Hidden from the planner, a common word walked the newest-first
    // index, filtering tens of thousands of rows: a search page took 9 ms against 0.9 at 100,000 contacts.
    const matches = `c.search_vector @@ "${schema}"."contact_search_query"(?, ?)`;
    const newestFirst = 'order by c.created_at desc, c.id desc limit ? offset ?';
    queries = {
      // A merged contact stays readable by id (it says where it went); any other deleted one is gone.
      byId: `select ${columns} from ${table} as c where c.id = ? and (not c.deleted or c.merged_into is not null)`,
      live: `select ${columns} from ${table} as c where not c.deleted`,
      matches,
      page: `select ${columns} from ${table} as c where not c.deleted ${newestFirst}`,
      searchPage: `select ${columns} from ${table} as c where not c.deleted and ${matches} ${newestFirst}`,
      liveTotal: `select live as total from "${schema}"."contact_live_count"`,
      searchTotal: `select total, exact, estimate from "${schema}"."contact_search_total"("${schema}"."contact_search_query"(?, ?), ?, ?::bigint)`,
      // The event goes in the same statement (a data-modifying CTE): one round trip, one transaction.
      insert: `with created as (insert into ${table} (${INSERT_FIELDS.map(column).join(', ')}) values (${insertPlaceholders.join(', ')}) returning id)
        insert into ${events} (type, contact_id) select 'created', id from created`,
      update: `with changed as (update ${table} as c set ${assignments}, ${column('updatedAt')} = ?
        where c.id = ? and not c.deleted and (?::integer is null or c.version = ?)
          and coalesce(${setOrKeep('firstName')}, ${setOrKeep('email')}) is not null
        returning ${columns}),
        announced as (insert into ${events} (type, contact_id) select 'updated', "id" from changed)
        select * from changed`,
    };
    bySchema.set(schema, queries);
  }
  return queries;
}
