import { Migration } from '../../../lib/data/database.js';
import { PLATFORMS } from '../social.platforms.js';

/**
 * Platforms became the graph's `Platform` enum (social.platforms.ts); before, a post could name any
 * word. A row naming a network outside the enum could no longer be answered (GraphQL cannot serialize
 * a value its enum lacks, and the post, or its item detail, would fail as a whole). Such a name was
 * never published to (no adapter), so it goes: a hyphenated name becomes the enum's underscored one
 * when that is a platform (`google-business`), any other is dropped from the post, and the failed
 * attempts at it ("no ... account is connected") with it. The version trigger moves each changed
 * post's ETag. The enum only grows, so the list of today is the right one for every later database.
 */
export class Migration20261127000001PlatformNames extends Migration {
  override up(): void {
    const known = `array[${PLATFORMS.map((platform) => `'${platform}'`).join(', ')}]::text[]`;
    this.addSql(`update post set platforms = array(
        select name from (
          select replace(named, '-', '_') as name, min(position) as first
          from unnest(platforms) with ordinality as listed(named, position) group by 1
        ) as names
        where name = any(${known}) order by first
      )
      where not platforms <@ ${known}`);
    this.addSql(`delete from publish_attempt where not platform = any(${known})`);
  }
}
