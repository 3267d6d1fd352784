import { Migration } from '#lib/data/database.js';

/**
 * `contact_search_total` (migration ContactSearchTotal) takes the estimate a caller already holds and
 * answers the one it used. Planning the search (EXPLAIN) cost PostgreSQL about a fifth of a search's
 * time at 100,000 contacts; the next page of a search, or the same search again, now skips it. The
 * estimate only chooses between counting and estimating, and moves only when ANALYZE runs, so one a
 * minute old chooses as well: a total flagged exact is still never a guess.
 */
export class Migration20261123210001ContactSearchEstimate extends Migration {
  override name = 'Migration20261123210001ContactSearchEstimate';

  override up(): void {
    this.addSql('drop function contact_search_total(tsquery, integer)');
    this.addSql(`create function contact_search_total(query tsquery, exact_limit integer, known_estimate bigint,
        out total bigint, out exact boolean, out estimate bigint)
      language plpgsql set search_path from current as $$
      declare
        plan json;
      begin
        if (select live from contact_live_count) > exact_limit then
          estimate := known_estimate;
          if estimate is null then
            execute format('explain (format json) select 1 from contact where not deleted and search_vector @@ %L::tsquery', query) into plan;
            estimate := round((plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric);
          end if;
          if estimate > exact_limit then
            total := estimate;
            exact := false;
            return;
          end if;
        end if;
        select count(*) into total from (select 1 from contact where not deleted and search_vector @@ query limit exact_limit + 1) as matches;
        exact := total <= exact_limit;
        if not exact then
          total := greatest(coalesce(estimate, 0), exact_limit + 1);
        end if;
      end $$`);
  }
}
