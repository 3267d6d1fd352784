import { Migration } from '#lib/data/database.js';

/** Providers that deliver `name+tag@` to `name@`: the tag is no part of the mailbox. Gmail ignores dots as well. */
const TAG_PROVIDERS = ['outlook.com', 'hotmail.com', 'live.com', 'icloud.com', 'me.com', 'fastmail.com', 'proton.me'];

const list = (values: string[]) => values.map((value) => `'${value}'`).join(', ');

/**
 * What duplicates are found by, and what a merge keeps to be undone (docs/api.md, "Duplicates and merge").
 *
 * The keys are IMMUTABLE functions of a contact's columns, indexed as expressions (partial: live contacts
 * only) rather than stored columns: PostgreSQL keeps an expression index current on every write path
 * (the API's statements, the import's COPY, hand-written SQL) without the code having to, and adding an
 * index does not rewrite the table, so the previous release runs unchanged on this schema (expand only).
 * `pg_trgm` and `unaccent` go in `public`, where every service's session finds them; PGlite loads them
 * when it opens (lib/data/database.ts). unaccent() itself is only STABLE (its dictionary could change),
 * which is why the wrappers that call it are declared IMMUTABLE: the dictionary is never reloaded here.
 *
 * Names are compared by trigram similarity, looked up nearest first on a GiST index: a k-nearest walk
 * stops after a few rows however many names look alike, where a GIN `%` match returns every name past
 * the session's threshold (thousands, in a book of generated names).
 */
export class Migration20261128100001ContactDuplicates extends Migration {
  override name = 'Migration20261128100001ContactDuplicates';

  override up(): void {
    this.addSql('create extension if not exists pg_trgm schema public');
    this.addSql('create extension if not exists unaccent schema public');
    const email = `lower(btrim($1))`;
    const local = `split_part(${email}, '@', 1)`;
    const domain = `split_part(${email}, '@', 2)`;
    this.addSql(`create function contact_email_key(text) returns text language sql immutable parallel safe as $$
      select case
        when ${domain} in ('gmail.com', 'googlemail.com') then replace(split_part(${local}, '+', 1), '.', '') || '@gmail.com'
        when ${domain} in (${list(TAG_PROVIDERS)}) then split_part(${local}, '+', 1) || '@' || ${domain}
        else nullif(${email}, '')
      end $$`);
    // E.164 where the number says its country (+ or 00); a national number of ten digits is read as
    // North American (+1), the one national plan the book's imports are known to carry; any other
    // national number keeps its digits, so that two spellings of it still meet.
    const bare = `regexp_replace($1, '\\s*(ext\\.?|x|#)\\s*\\d+\\s*$', '', 'i')`;
    const digits = `regexp_replace(${bare}, '\\D', '', 'g')`;
    this.addSql(`create function contact_phone_key(text) returns text language sql immutable parallel safe as $$
      select case
        when length(${digits}) < 7 then null
        when btrim(${bare}) like '+%' then '+' || ${digits}
        when ${digits} like '00%' then '+' || substr(${digits}, 3)
        when length(${digits}) = 10 then '+1' || ${digits}
        when length(${digits}) = 11 and ${digits} like '1%' then '+' || ${digits}
        else ${digits}
      end $$`);
    const folded = (text: string) =>
      `nullif(btrim(regexp_replace(lower(public.unaccent('public.unaccent'::regdictionary, ${text})), '\\s+', ' ', 'g')), '')`;
    this.addSql(`create function contact_name_key(text, text) returns text language sql immutable parallel safe as $$
      select ${folded(`coalesce($1, '') || ' ' || coalesce($2, '')`)} $$`);
    this.addSql(`create function contact_company_key(text) returns text language sql immutable parallel safe as $$
      select ${folded('$1')} $$`);
    this.addSql(
      'create index contact_email_key_idx on contact (contact_email_key(email)) where not deleted and email is not null',
    );
    this.addSql(
      'create index contact_phone_key_idx on contact (contact_phone_key(phone)) where not deleted and phone is not null',
    );
    this.addSql(
      'create index contact_company_key_idx on contact (contact_company_key(company)) where not deleted and company is not null',
    );
    this.addSql(
      'create index contact_name_key_trgm_idx on contact using gist (contact_name_key(first_name, last_name) public.gist_trgm_ops) where not deleted',
    );

    // The book's likely pairs, computed in the background (duplicate-pairs.ts) and read a page at a time.
    this.addSql(`create table contact_duplicate_pair (
      a_id uuid not null, b_id uuid not null, score real not null, reasons text[] not null,
      primary key (a_id, b_id))`);
    this.addSql(
      'create index contact_duplicate_pair_rank_idx on contact_duplicate_pair (score desc, a_id desc, b_id desc)',
    );
    this.addSql(`create table contact_duplicate_state (
      id integer primary key check (id = 1), signature text not null, refreshed_at timestamptz(3) not null)`);

    // Merges: the survivor of a merged contact, and what each merge changed, to be undone.
    this.addSql('alter table contact add column merged_into uuid null references contact (id)');
    this.addSql('create index contact_merged_into_idx on contact (merged_into) where merged_into is not null');
    this.addSql(`create table contact_merge (
      id uuid primary key,
      survivor_id uuid not null references contact (id) on delete cascade,
      merged_ids uuid[] not null,
      changes jsonb not null,
      moved jsonb not null,
      created_at timestamptz(3) not null default now(),
      undone_at timestamptz(3) null
    )`);
    this.addSql('create index contact_merge_survivor_idx on contact_merge (survivor_id)');
  }
}
