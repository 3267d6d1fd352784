import { Migration } from '#lib/data/database.js';

/**
 * Millisecond precision, as JavaScript dates have, for the time the surveys connection pages by: a
 * keyset cursor holds it as read into a date, and must compare equal to the stored value.
 */
export class Migration20261126100001SurveyKeysetTimes extends Migration {
  override up(): void {
    this.addSql('alter table survey alter column created_at type timestamptz(3)');
  }
}
