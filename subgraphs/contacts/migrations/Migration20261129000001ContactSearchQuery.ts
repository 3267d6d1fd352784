import { Migration } from '#lib/data/database.js';

/**
 * A search's tsquery, made two ways. The words a person typed, split at anything but letters and
 * digits, each a prefix (`toPrefixQuery`: "jan smi" finds "Jane Smith"), or else the tokens
 * PostgreSQL's own parser makes of the same text, each a prefix. The search vector was made by that
 * parser, which keeps some punctuation inside a token: the company `ACME-2024` is stored as `acme` and
 * `-2024`, and `3.14` as `3.14`, so the typed words alone (`acme & 2024`, `3 & 14`) never found them.
 * When both ways give the same tokens (most searches), the query is the typed one alone, so the index
 * is not searched twice. The parser reads at most 200 characters and 16 tokens (the typed words stop
 * at 8), so pasting a page into the search box cannot make one search costly. Only a function is
 * added: the column, its index and the previous release's queries stay as they were, so a rolling
 * upgrade changes nothing under the instances still running it.
 */
export class Migration20261129000001ContactSearchQuery extends Migration {
  override name = 'Migration20261129000001ContactSearchQuery';

  override up(): void {
    this.addSql(`create function contact_search_query(words text, search text) returns tsquery
      language sql immutable parallel safe as $$
        select case when parsed is null or (parsed @> typed and typed @> parsed) then typed else typed || parsed end
        from (
          select to_tsquery('simple', words) as typed,
            to_tsquery('simple', string_agg('''' || replace(replace(token, '\\', '\\\\'), '''', '''''') || ''':*', ' & ')) as parsed
          from (
            select token from unnest(tsvector_to_array(to_tsvector('simple', left(search, 200)))) as token limit 16
          ) as tokens
        ) as both_ways
      $$`);
  }
}
