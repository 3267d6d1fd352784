import { Migration } from '#lib/data/database.js';
import { versionColumnSql } from '#lib/data/versions.js';

/** Brands carry a version, their REST ETag (lib/data/versions.ts). */
export class Migration20261126000003BrandVersion extends Migration {
  override up(): void {
    for (const statement of versionColumnSql('brand')) this.addSql(statement);
  }
}
