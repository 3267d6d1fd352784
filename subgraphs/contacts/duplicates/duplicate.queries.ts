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
/**
 * What a score is multiplied by for each contact detail both contacts have and that differs (an
 * e-mail address, a phone number): evidence against one person, as record linkage weighs a
 * disagreement. Two colleagues with alike names and their own work addresses and lines fall below
 * the book's threshold; the same names with nothing to tell them apart stay above it.
 */
export const CONFLICT = 0.8;
/** Trigram similarity (0..1) from which two names count as alike: "Jonathan Smith" and "jonathon smith" are 0.67. */
export const NAME_SIMILARITY = 0.6;
/** Lowest score the duplicates of one contact list. */
export const CONTACT_THRESHOLD = 0.3;
/** Lowest score of the book's pairs (the default threshold of detection). */
export const BOOK_THRESHOLD = 0.6;
/** Candidates taken from each index per contact: bounds a lookup's work however common a key is. */
export const CANDIDATES_PER_KEY = 50;
/**
 * Contacts sharing one key beyond this are a shared mailbox or switchboard, not one person: left out of the book's pairs.
 * Names are compared within blocks of one company and the same first name, or the same company and the
 * same last name (once folded: a typo rarely hits both), never across a whole large company.
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
  /** Computes the pairs of the contacts changed since `?` again (upserts; `dropChanged` first). */
  refreshChanged: string;
  /** Drops the pairs of the contacts changed since `?` (twice). */
  dropChanged: string;
  /** How many contacts changed since `?`, and how many are live. */
  changedCount: string;
  /** Records what the pairs were computed from; `?` the signature and the time the next refresh looks from. */
  refreshed: string;
  /** What the book's pairs are computed from now: the previous release, during an upgrade, compares it with the last. */
  signature: string;
  /** Since when contacts count as changed for the next refresh (no row: the pairs were never computed). */
  lastRefresh: string;
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
 * and the reasons, as SQL columns `score` and `reasons`. `o` is a contact row, whose keys are computed
 * here, or (`oHasKeys`) a row that carries them already.
 */
function scored(schema: string, p: string, o: string, oHasKeys = false): string {
  const key = (name: string, call: string) => (oHasKeys ? `${o}.${name}` : `"${schema}".${call}`);
  // The other contact's keys, computed once per candidate (offset 0 keeps PostgreSQL from copying the
  // calls into every use).
  const keys = `select coalesce(public.similarity(${p}.nk, ${key('nk', `contact_name_key(${o}.first_name, ${o}.last_name)`)}), 0) as s,
    coalesce(${p}.ck = ${key('ck', `contact_company_key(${o}.company)`)}, false) as co,
    ${key('ek', `contact_email_key(${o}.email)`)} as ek, ${key('pk', `contact_phone_key(${o}.phone)`)} as pk offset 0`;
  return `cross join lateral (${keys}) as k
    cross join lateral (select coalesce(${p}.ek = k.ek, false) as e, coalesce(${p}.pk = k.pk, false) as ph,
      k.s >= ${NAME_SIMILARITY} as n, k.s as s, k.co as co, (${p}.ek <> k.ek) is true as ex, (${p}.pk <> k.pk) is true as px
      offset 0) as f
    cross join lateral (select ((1 - (1 - case when f.e then ${WEIGHTS.email} else 0 end)
        * (1 - case when f.ph then ${WEIGHTS.phone} else 0 end)
        * (1 - case when f.n then ${WEIGHTS.name} * f.s else 0 end)
        * (1 - case when f.co and (f.e or f.ph or f.n) then ${WEIGHTS.company} else 0 end))
        * case when f.ex then ${CONFLICT} else 1 end * case when f.px then ${CONFLICT} else 1 end)::real as score,
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
  // CANDIDATES_PER_KEY rows: the same e-mail or phone, and names by halves (a typo rarely hits both):
  // the same last name with the first names nearest first, on a GiST index of (last name, first-name
  // trigrams), and at the same company the same first name (a B-tree), whatever the last. A trigram
  // walk of whole names over the book cost hundreds of milliseconds at a million contacts, and a second
  // GiST index for last-name typos across the book doubled what the first costs every write.
  const source = (condition: string, order = '') =>
    `select p.id as probe_id, near.id from probe p cross join lateral (
      select o.id from ${table} o where not o.deleted and ${condition} ${order} limit ${CANDIDATES_PER_KEY}) near`;
  // The live contacts that share a block with a changed contact `x` (`partial`: the index's own condition).
  const sharing = (partial: string, condition: string) =>
    `select c.id from changed x join ${table} c on not c.deleted and ${partial} and ${condition}`;
  // First and last name folded apart: a typo rarely hits both, so a pair alike by name shares one of them.
  const keyColumns = (c: string) =>
    `${keysOf(schema, c)}, ${fn('contact_folded')}(${c}.first_name) as fk, ${fn('contact_folded')}(${c}.last_name) as lk`;
  const pairs = `"${schema}"."contact_duplicate_pair"`;
  // The book's pairs from the contacts `live` names (a CTE over `live` and what it needs), those
  // that pass `keep` (a condition on the candidate pair a < b): every pair of contacts sharing a key,
  // in groups small enough to be one person's (LARGEST_GROUP), scored as a lookup scores them.
  const pairsOf = (live: string, keep: string) => `with ${live},
      groups as (
        select array_agg(id) as ids from live where ek is not null group by ek having count(*) between 2 and ${LARGEST_GROUP}
        union all select array_agg(id) from live where pk is not null group by pk having count(*) between 2 and ${LARGEST_GROUP}
        union all select array_agg(id) from live where ck is not null and fk is not null
          group by ck, fk having count(*) between 2 and ${LARGEST_GROUP}
        union all select array_agg(id) from live where ck is not null and lk is not null
          group by ck, lk having count(*) between 2 and ${LARGEST_GROUP}),
      candidate as (select distinct a, b from groups g, unnest(g.ids) a, unnest(g.ids) b where a < b and ${keep})
      insert into ${pairs} (a_id, b_id, score, reasons)
      select p.id, o.id, m.score, m.reasons from candidate join live p on p.id = candidate.a
        join live o on o.id = candidate.b ${scored(schema, 'p', 'o', true)}
      where m.score >= ${BOOK_THRESHOLD}
      on conflict (a_id, b_id) do update set score = excluded.score, reasons = excluded.reasons`;
  queries = {
    ofContacts: `with probe as (select c.id, ${keyColumns('c')} from ${table} c
        where c.id = any(?::uuid[]) and not c.deleted),
      candidate as (
        ${source(`o.email is not null and ${fn('contact_email_key')}(o.email) = p.ek`)}
        union ${source(`o.phone is not null and ${fn('contact_phone_key')}(o.phone) = p.pk`)}
        union ${source(`p.fk is not null and ${fn('contact_folded')}(o.last_name) = p.lk`, `order by ${fn('contact_folded')}(o.first_name) operator(public.<->) p.fk`)}
        union ${source(`o.company is not null and ${fn('contact_company_key')}(o.company) = p.ck and ${fn('contact_folded')}(o.first_name) = p.fk`)}),
      ranked as (
        select candidate.probe_id, ${columns}, m.score, m.reasons,
          row_number() over (partition by candidate.probe_id order by m.score desc, o.id) as rank
        from candidate join probe p on p.id = candidate.probe_id join ${table} o on o.id = candidate.id and o.id <> p.id
        ${scored(schema, 'p', 'o')}
        where m.score >= ${CONTACT_THRESHOLD})
      select * from ranked where rank <= ? order by probe_id, rank`,
    refreshPairs: pairsOf(`live as (select c.id, ${keyColumns('c')} from ${table} c where not c.deleted)`, 'true'),
    // The contacts that share a block with a changed one, each block found on its index.
    refreshChanged: pairsOf(
      `changed as (select c.id, ${keyColumns('c')} from ${table} c
        where c.updated_at > ?::timestamptz and not c.deleted),
      near as (
        ${sharing('c.email is not null', `${fn('contact_email_key')}(c.email) = x.ek`)}
        union ${sharing('c.phone is not null', `${fn('contact_phone_key')}(c.phone) = x.pk`)}
        union ${sharing('c.company is not null', `${fn('contact_company_key')}(c.company) = x.ck and ${fn('contact_folded')}(c.first_name) = x.fk`)}
        union ${sharing('c.company is not null', `${fn('contact_company_key')}(c.company) = x.ck and ${fn('contact_folded')}(c.last_name) = x.lk`)}),
      live as (select c.id, ${keyColumns('c')} from ${table} c where c.id in (select id from near))`,
      '(a in (select id from changed) or b in (select id from changed))',
    ),
    dropChanged: `delete from ${pairs} where a_id in (select id from ${table} where updated_at > ?::timestamptz)
      or b_id in (select id from ${table} where updated_at > ?::timestamptz)`,
    changedCount: `select count(*)::int as changed, (select live from "${schema}"."contact_live_count")::int as live
      from ${table} where updated_at > ?::timestamptz`,
    clearPairs: `delete from ${pairs}`,
    refreshed: `insert into "${schema}"."contact_duplicate_state" (id, signature, changes_from, refreshed_at)
      values (1, ?, ?::timestamptz, now())
      on conflict (id) do update set signature = excluded.signature, changes_from = excluded.changes_from,
        refreshed_at = excluded.refreshed_at`,
    lastRefresh: `select changes_from from "${schema}"."contact_duplicate_state" where id = 1`,
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
