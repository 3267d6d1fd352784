import { eventChannelOf, eventLogSql } from '#lib/data/event-feed.js';
import { Migration } from '#lib/data/database.js';

/**
 * Contacts get an event log that subscriptions follow (`contactEvents`): one row per create, update,
 * delete and stage move, written in the same statement or transaction as the change, with the feed's
 * columns and trigger (lib/data/event-feed.ts). Events are kept at least 7 days; older ones may be swept.
 */
export class Migration20261128000001ContactEvents extends Migration {
  override name = 'Migration20261128000001ContactEvents';

  override up(): void {
    this.addSql(`create table contact_event (
      id uuid primary key default gen_random_uuid(),
      seq bigint generated always as identity unique,
      type text not null check (type in ('created', 'updated', 'deleted', 'moved', 'merged')),
      contact_id uuid not null,
      from_stage_id uuid null,
      to_stage_id uuid null,
      occurred_at timestamptz(3) not null default now()
    )`);
    this.addSql('create index contact_event_occurred_idx on contact_event (occurred_at)');
    for (const statement of eventLogSql('contact_event', eventChannelOf('contacts'))) this.addSql(statement);
  }
}
