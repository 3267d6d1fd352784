import { Migration } from '#lib/data/database.js';

/**
 * Imports run as background jobs. `contact_import` is the job and its progress; each batch's contacts,
 * its row in `contact_import_batch`, the errors of its rows and the progress commit in one transaction,
 * so a restarted job goes on from `next_row` and every row is written exactly once.
 */
export class Migration20261126000004ContactImportJobs extends Migration {
  override name = 'Migration20261126000004ContactImportJobs';

  override up(): void {
    this.addSql(`create table contact_import (
      id uuid primary key,
      status text not null default 'queued',
      storage_key text not null,
      mapping jsonb,
      dry_run boolean not null default false,
      rows integer,
      next_row integer not null default 2,
      processed integer not null default 0,
      created integer not null default 0,
      updated integer not null default 0,
      skipped integer not null default 0,
      error_count integer not null default 0,
      failure jsonb,
      created_by text,
      created_at timestamptz(3) not null default now(),
      started_at timestamptz(3),
      finished_at timestamptz(3)
    )`);
    this.addSql('create index contact_import_created_idx on contact_import (created_at desc)');
    this.addSql(`create table contact_import_batch (
      import_id uuid not null references contact_import (id) on delete cascade,
      first_row integer not null,
      last_row integer not null,
      created integer not null,
      updated integer not null,
      written boolean not null,
      primary key (import_id, first_row)
    )`);
    this.addSql(`create table contact_import_error (
      import_id uuid not null references contact_import (id) on delete cascade,
      seq integer not null,
      row integer not null,
      "column" text,
      message text not null,
      primary key (import_id, seq)
    )`);
  }
}
