import { Migration } from '#lib/data/database.js';
import { versionColumnSql } from '#lib/data/versions.js';

/**
 * Surveys carry a version, their REST ETag, checked by conditional writes (lib/data/versions.ts). A
 * survey's representation lists its assets, so an asset added, committed or removed is a new
 * version of its survey too: otherwise a client revalidating the survey would keep an old list.
 */
export class Migration20261126000001SurveyVersion extends Migration {
  override up(): void {
    for (const statement of versionColumnSql('survey')) this.addSql(statement);
    this
      .addSql(`create function survey_version_after_asset_change() returns trigger language plpgsql set search_path from current as $$
      begin
        update survey set version = version + 1 where id = coalesce(new.survey_id, old.survey_id);
        return null;
      end $$`);
    this.addSql(`create trigger survey_asset_version after insert or update or delete on survey_asset
      for each row execute function survey_version_after_asset_change()`);
  }
}
