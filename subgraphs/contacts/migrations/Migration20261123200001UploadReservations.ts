import { Migration } from '#lib/data/database.js';

/**
 * Uploads are reserved before their bytes arrive (`lib/storage/uploads.ts`): an attachment is a pending row
 * until its commit, and a CSV import has a row of its own until it is read, so the sweep finds what
 * never got its bytes. Attachments already stored are committed.
 */
export class Migration20261123200001UploadReservations extends Migration {
  override name = 'Migration20261123200001UploadReservations';

  override up(): void {
    this.addSql(
      `alter table attachment add column status text not null default 'committed', add column upload_expires_at timestamptz`,
    );
    this.addSql(`alter table attachment alter column status set default 'pending'`);
    this.addSql(
      `create index attachment_pending_expiry_idx on attachment (upload_expires_at) where status = 'pending'`,
    );
    this.addSql(`create table import_upload (
      id uuid primary key,
      storage_key text not null unique,
      upload_expires_at timestamptz not null,
      created_at timestamptz(3) not null default now()
    )`);
    this.addSql('create index import_upload_expiry_idx on import_upload (upload_expires_at)');
  }
}
