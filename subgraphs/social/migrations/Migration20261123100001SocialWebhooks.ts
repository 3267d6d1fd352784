import { Migration } from '#lib/data/database.js';

/**
 * Signed webhooks (their messages, delivery attempts and the transactional outbox that feeds
 * them) and client review links.
 */
export class Migration20261123100001SocialWebhooks extends Migration {
  override name = 'Migration20261123100001SocialWebhooks';

  override up(): void {
    this.addSql(`create table webhook (
      id uuid primary key,
      owner_id text not null,
      url text not null,
      events text[] not null,
      brand_ids uuid[] null,
      description text null,
      secret_sealed text not null,
      enabled boolean not null default true,
      disabled_reason text null,
      failing_since timestamptz null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql('create index webhook_owner_idx on webhook (owner_id, created_at desc, id desc)');

    // One event for one webhook; its id is the `webhook-id` header, the same on every retry.
    this.addSql(`create table webhook_message (
      id uuid primary key,
      webhook_id uuid not null references webhook (id) on delete cascade,
      owner_id text not null,
      event_id uuid not null,
      type text not null,
      body text not null,
      status text not null check (status in ('pending', 'succeeded', 'failed')),
      attempts integer not null default 0,
      next_attempt_at timestamptz null,
      created_at timestamptz not null default now(),
      unique (event_id, webhook_id)
    )`);

    this.addSql(`create table webhook_delivery (
      id uuid primary key,
      message_id uuid not null references webhook_message (id) on delete cascade,
      webhook_id uuid not null references webhook (id) on delete cascade,
      event_id uuid not null,
      type text not null,
      attempt integer not null,
      succeeded boolean not null,
      status_code integer null,
      error text null,
      response_excerpt text null,
      duration_ms integer not null,
      attempted_at timestamptz not null default now()
    )`);
    this.addSql(
      'create index webhook_delivery_webhook_idx on webhook_delivery (webhook_id, attempted_at desc, id desc)',
    );
    // Pruning of the history finds old rows by time.
    this.addSql('create index webhook_delivery_attempted_idx on webhook_delivery (attempted_at)');
    this.addSql(`create index webhook_message_done_idx on webhook_message (created_at) where status <> 'pending'`);

    // The transactional outbox: a row appears in the very transaction that writes an audit event
    // (or marks an integration for reconnecting), so it commits or rolls back with the change; the
    // dispatcher turns committed rows into webhook messages and deletes them. Triggers, rather than
    // code in each service, so no path that writes an audit event can forget its webhooks.
    this.addSql(`create table webhook_outbox (
      seq bigint generated always as identity primary key,
      source text not null check (source in ('content_event', 'integration')),
      source_id uuid not null,
      owner_id text not null,
      brand_id uuid null,
      data jsonb null,
      occurred_at timestamptz not null default now()
    )`);
    // Owners without a webhook (most) cost one indexed lookup per change, not a row to write and delete.
    this.addSql(`create function webhook_outbox_from_content_event() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from social.webhook where owner_id = new.owner_id and enabled) then
          insert into social.webhook_outbox (source, source_id, owner_id, brand_id, occurred_at)
            values ('content_event', new.id, new.owner_id, new.brand_id, new.occurred_at);
        end if;
        return null;
      end
    $$`);
    this.addSql(`create trigger content_event_to_webhook_outbox after insert on content_event
      for each row execute function webhook_outbox_from_content_event()`);
    this.addSql(`create function webhook_outbox_from_integration() returns trigger language plpgsql as $$
      begin
        if not exists (select 1 from social.webhook where owner_id = new.owner_id and enabled) then
          return null;
        end if;
        insert into social.webhook_outbox (source, source_id, owner_id, brand_id, data)
          values ('integration', new.id, new.owner_id, null, jsonb_build_object(
            'integrationId', new.id, 'platform', new.platform, 'accountName', new.account_name, 'error', new.last_error));
        return null;
      end
    $$`);
    this.addSql(`create trigger integration_needs_reconnect_to_webhook_outbox after update of status on integration
      for each row when (new.status = 'needs_reconnect' and old.status is distinct from 'needs_reconnect')
      execute function webhook_outbox_from_integration()`);

    // A review link's decision names the link as its actor.
    this.addSql('alter table content_event drop constraint content_event_actor_type_check');
    this.addSql(`alter table content_event add constraint content_event_actor_type_check
      check (actor_type in ('user', 'api_key', 'system', 'review_link'))`);

    this.addSql(`create table review_link (
      id uuid primary key,
      owner_id text not null,
      brand_id uuid not null,
      post_id uuid not null references post (id) on delete cascade,
      token_hash text not null unique,
      expires_at timestamptz not null,
      revoked_at timestamptz null,
      created_at timestamptz not null default now()
    )`);
    this.addSql('create index review_link_post_idx on review_link (post_id)');
  }
}
