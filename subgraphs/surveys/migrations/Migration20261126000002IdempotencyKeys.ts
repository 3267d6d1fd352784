import { Migration } from '#lib/data/database.js';
import { idempotencySql } from '#lib/data/idempotency.js';

/** The Idempotency-Key records of the service's mutations, beside the rows they write (lib/data/idempotency.ts). */
export class Migration20261126000002IdempotencyKeys extends Migration {
  override up(): void {
    for (const statement of idempotencySql()) this.addSql(statement);
  }
}
