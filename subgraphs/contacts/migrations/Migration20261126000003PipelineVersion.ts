import { Migration } from '#lib/data/database.js';
import { versionColumnSql } from '#lib/data/versions.js';

/**
 * Pipelines carry a version, their REST ETag (lib/data/versions.ts). A pipeline's representation
 * lists its stages, so a stage added, renamed, moved or removed is a new version of its pipeline too.
 */
export class Migration20261126000003PipelineVersion extends Migration {
  override name = 'Migration20261126000003PipelineVersion';

  override up(): void {
    for (const statement of versionColumnSql('pipeline')) this.addSql(statement);
    this
      .addSql(`create function pipeline_version_after_stage_change() returns trigger language plpgsql set search_path from current as $$
      begin
        update pipeline set version = version + 1 where id = coalesce(new.pipeline_id, old.pipeline_id);
        return null;
      end $$`);
    this.addSql(`create trigger stage_pipeline_version after insert or update or delete on stage
      for each row execute function pipeline_version_after_stage_change()`);
  }
}
