import { Migration } from '#lib/data/database.js';

/** A failed attempt whose outcome is unknown (cut off mid-call): a retry of it needs `force`, as it may post twice. */
export class Migration20261123100001PublishOutcome extends Migration {
  override up(): void {
    this.addSql('alter table publish_attempt add column outcome_unknown boolean not null default false');
  }
}
