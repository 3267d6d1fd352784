import { Migration } from '#lib/data/database.js';

/**
 * Millisecond precision, as JavaScript dates have, for the times the connections page by: a keyset
 * cursor holds the time as read into a date, and must compare equal to the stored value, or a row
 * sharing its millisecond could be skipped. The contacts schema did the same (ContactWork).
 */
export class Migration20261126100001KeysetTimes extends Migration {
  override up(): void {
    this.addSql('alter table brand alter column created_at type timestamptz(3)');
    this.addSql('alter table campaign alter column created_at type timestamptz(3)');
    this.addSql(
      'alter table post alter column created_at type timestamptz(3), alter column scheduled_at type timestamptz(3)',
    );
    this.addSql('alter table media_file alter column created_at type timestamptz(3)');
    this.addSql('alter table webhook_delivery alter column attempted_at type timestamptz(3)');
  }
}
