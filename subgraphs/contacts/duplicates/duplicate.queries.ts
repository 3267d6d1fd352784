import type { EntityManager } from '#lib/data/database.js';
import { Contact } from '../contact/contact.entity.js';
import { READ_FIELDS } from '../contact/contact.queries.js';

/**
 * Scores and thresholds, in one place for the per-contact lookup and the book's pairs. Each reason
 * is a weight; two reasons combine as independent evidence (1 - (1 - a)(1 - b)). A name alone is weak
 * evidence (people share names): it scores at most 0.5, below the book's threshold, and reaches it
 * with the same company, another e-mail or phone reason. The lookup of one contact, which a person reads,
 * shows weaker candidates too.
 */
export const WEIGHTS = { email: 0.9, phone: 0.8, name: 0.5, company: 0.5 } as const;
/** Trigram similarity (0..1) from which two names count as alike: "Jonathan Smith" and "jonathon smith" are 0.67. */
export const NAME_SIMILARITY = 0.6;
/** Lowest score the duplicates of one contact list. */
export const CONTACT_THRESHOLD = 0.3;
/** Lowest score of the book's pairs (the default threshold of detection). */
export const BOOK_THRESHOLD = 0.6;
/** Candidates taken from each index per contact: bounds a lookup's work however common a key is. */
export const CANDIDATES_PER_KEY = 50;
/**
 * Nearest names taken per contact: a k-nearest walk costs about its k, and a name alone is weak evidence,
 * so the few nearest do; a namesake at the same company comes by the company's candidates too.
 */
export const NEAREST_NAMES = 10;
/**
 * Contacts sharing one key beyond this are a shared mailbox or switchboard, not one person: left out of the book's pairs.
 * Names are compared within blocks of one company and the same initials, or the same company and the
 * same last three letters (a typo rarely hits both ends of a name), never across a whole large company.
 */
export const LARGEST_GROUP = 100;

/** The SQL of duplicate detection for one schema. */
export interface DuplicateQueries {
  /** Duplicates of each contact; `?` the ids (uuid[]), the most per contact. Rows: probe_id, the contact's columns, score, reasons. */
  ofContacts: string;
  /** Drops the book's pairs, before `refreshPairs` in the same transaction. */
  clearPairs: string;
  /** Computes the book's pairs again; `?` none. */
  refreshPairs: string;
  /** Records what the pairs were computed from; `?` the signature. */
  refreshed: string;
  /** What the book's pairs would be computed from now: the live count and the latest change. */
  signature: string;
  /** What they were last computed from (no row: never). */
  lastSignature: string;
  /** A page of live pairs, best first; `?` after score, a, b (nulls for the first page), limit. */
  pairs: string;
  /** Live pairs in the book. */
  /** The same pairs before a cursor, in reverse (`?` the cursor's score, a and b, then the limit). */
  pairsBefore: string;
  pairCount: string;
  /** Contacts by id, as read; `?` the ids (uuid[]). */
  contactsById: string;
}

const bySchema = new Map<string, DuplicateQueries>();

/**
 * The score of `o` against keys `p` (ek, pk, nk, ck: e-mail, phone, name and company keys of the probe)
 * and the reasons, as SQL columns `score` and `reasons`.
 */
function scored(schema: string, p: string, o: string): string {
  const email = `coalesce(${p}.ek = "${schema}".contact_email_key(${o}.email), false)`;
  const phone = `coalesce(${p}.pk = "${schema}".contact_phone_key(${o}.phone), false)`;
  // Computed once per candidate (offset 0 keeps PostgreSQL from copying the calls into every use).
  const keys = `select coalesce(public.similarity(${p}.nk, "${schema}".contact_name_key(${o}.first_name, ${o}.last_name)), 0) as s,
    coalesce(${p}.ck = "${schema}".contact_company_key(${o}.company), false) as co offset 0`;
  return `cross join lateral (${keys}) as k
    cross join lateral (select ${email} as e, ${phone} as ph, k.s >= ${NAME_SIMILARITY} as n, k.s as s, k.co as co offset 0) as f
    cross join lateral (select (1 - (1 - case when f.e then ${WEIGHTS.email} else 0 end)
        * (1 - case when f.ph then ${WEIGHTS.phone} else 0 end)
        * (1 - case when f.n then ${WEIGHTS.name} * f.s else 0 end)
        * (1 - case when f.co and (f.e or f.ph or f.n) then ${WEIGHTS.company} else 0 end))::real as score,
      array_remove(array[case when f.e then 'EMAIL' end, case when f.ph then 'PHONE' end,
        case when f.n then 'NAME' end, case when f.co and (f.e or f.ph or f.n) then 'COMPANY' end], null) as reasons) as m`;
}

function keysOf(schema: string, c: string): string {
  return `"${schema}".contact_email_key(${c}.email) as ek, "${schema}".contact_phone_key(${c}.phone) as pk,
    "${schema}".contact_name_key(${c}.first_name, ${c}.last_name) as nk, "${schema}".contact_company_key(${c}.company) as ck`;
}

export function duplicateQueries(em: EntityManager): DuplicateQueries {
  const meta = em.getMetadata(Contact);
  const schema = meta.schema ?? 'contacts';
  let queries = bySchema.get(schema);
  if (queries) return queries;
  const table = `"${schema}"."contact"`;
  const columns = READ_FIELDS.map((field) => `o."${meta.properties[field].fieldNames[0]}" as "${field}"`).join(', ');
  const fn = (name: string) => `"${schema}".${name}`;
  // Each source walks its own index (the same expressions, the same partial condition), at most
  // CANDIDATES_PER_KEY rows, the name nearest first (GiST trigram distance).
  const source = (condition: string, order = '', limit = CANDIDATES_PER_KEY) =>
    `select p.id as probe_id, near.id from probe p cross join lateral (
      select o.id from ${table} o where not o.deleted and ${condition} ${order} limit ${limit}) near`;
  const nameKey = `${fn('contact_name_key')}(o.first_name, o.last_name)`;
  const pairs = `"${schema}"."contact_duplicate_pair"`;
  queries = {
    ofContacts: `with probe as (select c.id, ${keysOf(schema, 'c')} from ${table} c where c.id = any(?::uuid[]) and not c.deleted),
      candidate as (
        ${source(`o.email is not null and ${fn('contact_email_key')}(o.email) = p.ek`)}
        union ${source(`o.phone is not null and ${fn('contact_phone_key')}(o.phone) = p.pk`)}
        union ${source(`o.company is not null and ${fn('contact_company_key')}(o.company) = p.ck`, `order by ${nameKey} operator(public.<->) p.nk`)}
        union ${source('p.nk is not null', `order by ${nameKey} operator(public.<->) p.nk`, NEAREST_NAMES)}),
      ranked as (
        select candidate.probe_id, ${columns}, m.score, m.reasons,
          row_number() over (partition by candidate.probe_id order by m.score desc, o.id) as rank
        from candidate join probe p on p.id = candidate.probe_id join ${table} o on o.id = candidate.id and o.id <> p.id
        ${scored(schema, 'p', 'o')}
        where m.score >= ${CONTACT_THRESHOLD})
      select * from ranked where rank <= ? order by probe_id, rank`,
    refreshPairs: `with live as (select c.id, ${keysOf(schema, 'c')} from ${table} c where not c.deleted),
      groups as (
        select array_agg(id) as ids from live where ek is not null group by ek having count(*) between 2 and ${LARGEST_GROUP}
        union all select array_agg(id) from live where pk is not null group by pk having count(*) between 2 and ${LARGEST_GROUP}
        union all select array_agg(id) from live where ck is not null and nk is not null
          group by ck, left(nk, 1), substr(nk, strpos(nk, ' ') + 1, 1) having count(*) between 2 and ${LARGEST_GROUP}
        union all select array_agg(id) from live where ck is not null and nk is not null
          group by ck, right(nk, 3) having count(*) between 2 and ${LARGEST_GROUP}),
      candidate as (select distinct a, b from groups g, unnest(g.ids) a, unnest(g.ids) b where a < b)
      insert into ${pairs} (a_id, b_id, score, reasons)
      select p.id, o.id, m.score, m.reasons from candidate join live p on p.id = candidate.a
        join ${table} o on o.id = candidate.b ${scored(schema, 'p', 'o')}
      where m.score >= ${BOOK_THRESHOLD}`,
    clearPairs: `delete from ${pairs}`,
    refreshed: `insert into "${schema}"."contact_duplicate_state" (id, signature, refreshed_at) values (1, ?, now())
      on conflict (id) do update set signature = excluded.signature, refreshed_at = excluded.refreshed_at`,
    lastSignature: `select signature from "${schema}"."contact_duplicate_state" where id = 1`,
    signature: `select (select live from "${schema}"."contact_live_count")::text || '/' ||
      coalesce((select max(updated_at) from ${table})::text, '') as signature`,
    pairs: `select pr.a_id as a, pr.b_id as b, pr.score, pr.reasons from ${pairs} pr
      join ${table} a on a.id = pr.a_id and not a.deleted join ${table} b on b.id = pr.b_id and not b.deleted
      where (?::real is null or (pr.score, pr.a_id, pr.b_id) < (?::real, ?::uuid, ?::uuid))
      order by pr.score desc, pr.a_id desc, pr.b_id desc limit ? offset ?`,
    pairsBefore: `select pr.a_id as a, pr.b_id as b, pr.score, pr.reasons from ${pairs} pr
      join ${table} a on a.id = pr.a_id and not a.deleted join ${table} b on b.id = pr.b_id and not b.deleted
      where (?::real is null or (pr.score, pr.a_id, pr.b_id) > (?::real, ?::uuid, ?::uuid))
      order by pr.score asc, pr.a_id asc, pr.b_id asc limit ?`,
    pairCount: `select count(*) as total from ${pairs} pr
      join ${table} a on a.id = pr.a_id and not a.deleted join ${table} b on b.id = pr.b_id and not b.deleted`,
    contactsById: `select ${columns} from ${table} o where o.id = any(?::uuid[])`,
  };
  bySchema.set(schema, queries);
  return queries;
}
