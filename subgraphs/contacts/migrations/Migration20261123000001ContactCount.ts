import { Migration } from '#lib/data/database.js';

/**
 * The number of live contacts, kept by statement-level triggers, so a page of the plain list gets its
 * exact total from one row instead of counting a million (a search counts its matches instead, up to
 * a cap). One statement that writes many contacts (an import batch) updates the row once.
 */
export class Migration20261123000001ContactCount extends Migration {
  override name = 'Migration20261123000001ContactCount';

  override up(): void {
    this.addSql(
      'create table contact_live_count (one boolean primary key default true check (one), live bigint not null)',
    );
    this.addSql('insert into contact_live_count (live) select count(*) from contact where not deleted');
    // `set search_path from current`: the functions find the service's schema whoever's session fires them.
    this
      .addSql(`create function contact_live_count_after_insert() returns trigger language plpgsql set search_path from current as $$
      begin
        update contact_live_count set live = live + (select count(*) from inserted where not deleted);
        return null;
      end $$`);
    this
      .addSql(`create function contact_live_count_after_update() returns trigger language plpgsql set search_path from current as $$
      begin
        update contact_live_count set live = live + (select count(*) from updated where not deleted) - (select count(*) from previous where not deleted);
        return null;
      end $$`);
    this
      .addSql(`create function contact_live_count_after_delete() returns trigger language plpgsql set search_path from current as $$
      begin
        update contact_live_count set live = live - (select count(*) from previous where not deleted);
        return null;
      end $$`);
    this.addSql(`create trigger contact_live_count_insert after insert on contact referencing new table as inserted
      for each statement execute function contact_live_count_after_insert()`);
    this
      .addSql(`create trigger contact_live_count_update after update on contact referencing old table as previous new table as updated
      for each statement execute function contact_live_count_after_update()`);
    this.addSql(`create trigger contact_live_count_delete after delete on contact referencing old table as previous
      for each statement execute function contact_live_count_after_delete()`);
  }
}
