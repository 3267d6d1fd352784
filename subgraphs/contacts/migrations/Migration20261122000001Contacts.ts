import { Migration } from '#lib/data/database.js';

export class Migration20261122000001Contacts extends Migration {
  override name = 'Migration20261122000001Contacts';

  override up(): void {
    // array_to_string is only STABLE; a generated column needs an IMMUTABLE expression.
    this.addSql(`create function tags_text(tags text[]) returns text language sql immutable parallel safe
      as $$ select coalesce(array_to_string(tags, ' '), '') $$`);
    this.addSql(`create table contact (
      id uuid primary key,
      first_name text null,
      last_name text null,
      email text null,
      phone text null,
      company text null,
      tags text[] not null default '{}',
      deleted boolean not null default false,
      deleted_at timestamptz null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      search_vector tsvector generated always as (
        to_tsvector('simple'::regconfig,
          coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' ||
          coalesce(email, '') || ' ' || regexp_replace(coalesce(email, ''), '[@._+-]+', ' ', 'g') || ' ' ||
          coalesce(company, '') || ' ' || tags_text(tags))
      ) stored
    )`);
    this.addSql('create index contact_search_idx on contact using gin (search_vector)');
    this.addSql('create index contact_live_created_idx on contact (created_at desc, id desc) where not deleted');
    this.addSql(
      'create unique index contact_live_email_uq on contact (lower(email)) where not deleted and email is not null',
    );
  }
}
