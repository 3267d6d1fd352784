import { Migration } from '#lib/data/database.js';

/**
 * The total of a search in one statement, cheap at any size. Counting is exact up to a limit, but
 * even a capped count visits a table row per match (the search index cannot tell a deleted or
 * invisible row), so confirming that a common word has more than 10,000 matches among a million
 * contacts costs tens of milliseconds, more than the page. So, as PostgREST's `count=estimated` does:
 * - while the whole table is within the limit, every search is counted exactly (no estimate needed);
 * - otherwise the planner's estimate comes first (EXPLAIN plans, it does not run): above the limit,
 *   it is the answer, flagged `exact = false`; within it, the matches are counted, capped at the
 *   limit, and a count that passes the limit still answers the estimate, flagged.
 * An exact total is therefore never a guess; a search the planner overestimates past the limit gets
 * an estimate, flagged, where a count would have been exact.
 */
export class Migration20261123000002ContactSearchTotal extends Migration {
  override name = 'Migration20261123000002ContactSearchTotal';

  override up(): void {
    this
      .addSql(`create function contact_search_total(query tsquery, exact_limit integer, out total bigint, out exact boolean)
      language plpgsql set search_path from current as $$
      declare
        plan json;
        estimate bigint;
      begin
        if (select live from contact_live_count) > exact_limit then
          execute format('explain (format json) select 1 from contact where not deleted and search_vector @@ %L::tsquery', query) into plan;
          estimate := round((plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric);
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
