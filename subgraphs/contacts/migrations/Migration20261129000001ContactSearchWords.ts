import { Migration } from '#lib/data/database.js';

/**
 * The search vector split at punctuation, as a search is (`toPrefixQuery`: words of letters and digits).
 *
 * PostgreSQL's parser read `ACME-2024` as the word `acme` and the signed number `-2024`, and `3.14` as one
 * decimal, while a search for either asks for `acme:* & 2024:*` or `3:* & 14:*`: a contact could not be found
 * by the very company it was saved with. Only the e-mail was split at its punctuation before. Now all of
 * the text is, so the words indexed are the words a search can ask for.
 *
 * The column keeps its name, so the previous release's statements and `contact_search_total` read it
 * unchanged during an upgrade. PostgreSQL 15 cannot change a generated column's expression in place, so
 * the column is dropped and added again: the table is rewritten and its index built again under a lock
 * (about a second per 100,000 contacts on the machine the benchmarks run on).
 */
export class Migration20261129000001ContactSearchWords extends Migration {
  override name = 'Migration20261129000001ContactSearchWords';

  override up(): void {
    this.addSql('alter table contact drop column search_vector');
    this.addSql(`alter table contact add column search_vector tsvector generated always as (
      to_tsvector('simple'::regconfig, regexp_replace(
        coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(email, '') || ' ' ||
        coalesce(company, '') || ' ' || tags_text(tags),
        '[[:punct:]]+', ' ', 'g'))
    ) stored`);
    this.addSql('create index contact_search_idx on contact using gin (search_vector)');
  }
}
