import { eventChannelOf, eventLogSql } from '#lib/data/event-feed.js';
import { Migration } from '#lib/data/database.js';

/**
 * The content audit log becomes a feed that subscriptions follow (`contentEvents`): each event keeps
 * the transaction that wrote it, read in (xact, seq) order below the snapshot horizon so that a
 * cursor resumes with nothing missed, and the log notifies on commit. Events written before keep the
 * migration's transaction: they stand before every later one, in their old order.
 */
export class Migration20261128000001ContentEventFeed extends Migration {
  override name = 'Migration20261128000001ContentEventFeed';

  override up(): void {
    for (const statement of eventLogSql('content_event', eventChannelOf('social'))) this.addSql(statement);
  }
}
