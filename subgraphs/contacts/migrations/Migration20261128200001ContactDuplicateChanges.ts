import { Migration } from '#lib/data/database.js';

/**
 * Faster lookups at a million contacts, and the book's pairs kept from what changed.
 *
 * A duplicate lookup walked the GiST trigram index of whole names nearest first twice: across the
 * book, and filtered to the contact's company. In a book of a million generated names the first walk
 * read some 250 ms of index before it found ten names, the second 480 ms (30,000 entries of other
 * companies passed over). Names are now compared by halves, first and last folded apart (a typo
 * rarely hits both): the same last name with the first names nearest first, on a GiST index of (last
 * name, first-name trigrams) (btree_gist puts the equality in the same index: a walk takes about a
 * millisecond), and at the same company the same first name, on a B-tree of (company, first name).
 * A second GiST index, for last-name typos across the book, was measured and left out: with both, an
 * insert of 20,000 contacts into a book of a million took 3.5 s instead of 1.1 s without the new
 * indexes; with this one and the B-trees, 2.4 s. (A GIN index of one-deletion keys was slower still.) The
 * book's pairs group by company and one half, on the B-trees, to find the pairs of changed contacts.
 * The indexes the previous release walks (whole names, companies) stay until a later release: an
 * instance of it still runs during an upgrade.
 *
 * The book's duplicate pairs are kept current from what changed instead of computed whole every time
 * (duplicate.service.ts, `refreshPairs`): the contacts changed since the last refresh are found by
 * `updated_at`, which every write path sets (the API's statements, a merge and its undo, the import's
 * batches), on an index of its own; `changes_from` is the time from which the next refresh looks.
 * Expand only: the previous release keeps writing `signature` and computing the pairs whole.
 */
export class Migration20261128200001ContactDuplicateChanges extends Migration {
  override name = 'Migration20261128200001ContactDuplicateChanges';

  override up(): void {
    this.addSql('create extension if not exists btree_gist schema public');
    // A first or a last name folded as a company is (case, accents, spaces).
    this.addSql(`create function contact_folded(text) returns text language sql immutable parallel safe as $$
      select nullif(btrim(regexp_replace(lower(public.unaccent('public.unaccent'::regdictionary, $1)), '\\s+', ' ', 'g')), '') $$`);
    const [first, last] = ['contact_folded(first_name)', 'contact_folded(last_name)'];
    this.addSql(`create index contact_last_first_idx on contact using gist (${last}, ${first} public.gist_trgm_ops)
      where not deleted`);
    for (const column of ['first_name', 'last_name']) {
      const key = `contact_company_key(company), contact_folded(${column})`;
      this.addSql(
        `create index contact_company_${column}_idx on contact (${key}) where not deleted and company is not null`,
      );
    }
    this.addSql('create index contact_updated_at_idx on contact (updated_at)');
    this.addSql('alter table contact_duplicate_state add column changes_from timestamptz(3) null');
    // A changed contact's old pairs are dropped by either end.
    this.addSql('create index contact_duplicate_pair_b_idx on contact_duplicate_pair (b_id)');
  }
}
