import { Migration } from '#lib/data/database.js';
import { PLATFORMS } from '../social.platforms.js';

/**
 * Platforms became the graph's `Platform` enum (social.platforms.ts); before, a post could name any
 * word. A row naming a network outside the enum could no longer be answered (GraphQL cannot serialize
 * a value its enum lacks, and the post, or its item detail, would fail as a whole). A hyphenated name
 * becomes the enum's underscored one when that is a platform (`google-business`); any other name
 * leaves the post's list, and the failed attempts at it ("no ... account is connected": no adapter
 * ever published there) leave the attempts. Nothing is deleted: a post keeps the names it lost in
 * `platforms_outside_enum`, and the attempts move to `publish_attempt_outside_enum`, for an operator
 * to read back. The version trigger moves each changed post's ETag. The enum only grows, so the list
 * of today is the right one for every later database.
 */
export class Migration20261127000001PlatformNames extends Migration {
  override up(): void {
    const known = `array[${PLATFORMS.map((platform) => `'${platform}'`).join(', ')}]::text[]`;
    this.addSql('alter table post add column if not exists platforms_outside_enum text[]');
    this.addSql(`update post set
        platforms_outside_enum = coalesce(platforms_outside_enum, '{}') || array(
          select named from unnest(platforms) with ordinality as listed(named, position)
          where not replace(named, '-', '_') = any(${known})
          group by named order by min(position)
        ),
        platforms = array(
          select name from (
            select replace(named, '-', '_') as name, min(position) as first
            from unnest(platforms) with ordinality as listed(named, position) group by 1
          ) as names
          where name = any(${known}) order by first
        )
      where not platforms <@ ${known}`);
    this.addSql('create table if not exists publish_attempt_outside_enum (like publish_attempt)');
    this.addSql(
      `insert into publish_attempt_outside_enum select * from publish_attempt where not platform = any(${known})`,
    );
    this.addSql(`delete from publish_attempt where not platform = any(${known})`);
  }
}
