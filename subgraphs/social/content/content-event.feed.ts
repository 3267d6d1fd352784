import type { Config } from '#lib/config.js';
import type { Orm } from '#lib/data/database.js';
import { eventChannelOf, EventFeed } from '#lib/data/event-feed.js';
import type { Logger } from '#lib/observability/logger.js';
import { ContentEvent } from './content-event.entity.js';

/** The content audit log followed as it grows (migration ContentEventFeed made it a feed). */
export function openContentFeed(config: Config, orm: Orm, logger: Logger): Promise<EventFeed<ContentEvent>> {
  const meta = orm.getMetadata().get(ContentEvent);
  return EventFeed.open(
    config,
    orm,
    {
      table: `"${meta.schema ?? 'social'}"."${meta.tableName}"`,
      channel: eventChannelOf('social'),
      eventOf: (row) => orm.em.fork().map(ContentEvent, row),
    },
    logger,
  );
}
