import { Migration } from '#lib/data/database.js';
import { versionColumnSql } from '#lib/data/versions.js';

/** Posts carry a version, their REST ETag, checked by conditional writes (lib/data/versions.ts). */
export class Migration20261126000001PostVersion extends Migration {
  override up(): void {
    for (const statement of versionColumnSql('post')) this.addSql(statement);
  }
}
