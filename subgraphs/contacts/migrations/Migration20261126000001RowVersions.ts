import { Migration } from '#lib/data/database.js';
import { versionColumnSql } from '#lib/data/versions.js';

/** Contacts and notes carry a version, their REST ETag, checked by conditional writes (lib/data/versions.ts). */
export class Migration20261126000001RowVersions extends Migration {
  override name = 'Migration20261126000001RowVersions';

  override up(): void {
    for (const statement of [...versionColumnSql('contact'), ...versionColumnSql('note')]) this.addSql(statement);
  }
}
