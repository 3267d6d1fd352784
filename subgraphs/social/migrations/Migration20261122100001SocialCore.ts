import { Migration } from '#lib/data/database.js';

/** Brands, posts, campaigns, the append-only content event log, publish attempts and API keys. */
export class Migration20261122100001SocialCore extends Migration {
  override name = 'Migration20261122100001SocialCore';

  override up(): void {
    this.addSql(`create table brand (
      id uuid primary key,
      owner_id text not null,
      name text not null,
      timezone text not null default 'UTC',
      default_posting_times text[] not null default '{}',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql('create index brand_owner_idx on brand (owner_id, created_at, id)');

    this.addSql(`create table campaign (
      id uuid primary key,
      owner_id text not null,
      brand_id uuid not null references brand (id) on delete cascade,
      name text not null,
      description text null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql('create index campaign_owner_idx on campaign (owner_id, created_at desc, id desc)');

    this.addSql(`create table post (
      id uuid primary key,
      owner_id text not null,
      brand_id uuid not null references brand (id) on delete cascade,
      campaign_id uuid null references campaign (id) on delete set null,
      content text not null,
      platforms text[] not null default '{}',
      media_ids text[] not null default '{}',
      scheduled_at timestamptz null,
      status text not null check (status in ('draft', 'suggested', 'rejected', 'queued', 'publishing', 'published', 'failed')),
      published_at timestamptz null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql('create index post_owner_created_idx on post (owner_id, created_at desc, id desc)');
    this.addSql('create index post_owner_status_scheduled_idx on post (owner_id, status, scheduled_at)');
    this.addSql('create index post_campaign_idx on post (campaign_id) where campaign_id is not null');
    // The publisher picks due posts across all users.
    this.addSql(`create index post_due_idx on post (scheduled_at) where status = 'queued'`);

    this.addSql(`create table content_event (
      id uuid primary key,
      seq bigint generated always as identity unique,
      owner_id text not null,
      brand_id uuid not null,
      content_id uuid not null,
      type text not null,
      actor_type text not null check (actor_type in ('user', 'api_key', 'system')),
      actor_id text not null,
      before jsonb null,
      after jsonb null,
      occurred_at timestamptz not null default now()
    )`);
    this.addSql('create index content_event_owner_seq_idx on content_event (owner_id, seq desc)');
    this.addSql('create index content_event_content_seq_idx on content_event (content_id, seq desc)');
    // The audit log is append-only: no role the application uses may rewrite history.
    this.addSql(`create function content_event_is_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'content_event is append-only: % is not allowed', tg_op;
      end
    $$`);
    this.addSql(`create trigger content_event_append_only before update or delete on content_event
      for each row execute function content_event_is_append_only()`);
    this.addSql(`create trigger content_event_no_truncate before truncate on content_event
      for each statement execute function content_event_is_append_only()`);

    this.addSql(`create table publish_attempt (
      id uuid primary key,
      post_id uuid not null references post (id) on delete cascade,
      platform text not null,
      status text not null check (status in ('pending', 'succeeded', 'failed')),
      platform_post_id text null,
      url text null,
      error text null,
      attempted_at timestamptz not null default now(),
      finished_at timestamptz null
    )`);
    this.addSql('create index publish_attempt_post_idx on publish_attempt (post_id, attempted_at)');

    this.addSql(`create table api_key (
      id uuid primary key,
      owner_id text not null,
      name text not null,
      key_hash text not null unique,
      prefix text not null,
      scopes text[] not null default '{}',
      brand_ids uuid[] null,
      last_used_at timestamptz null,
      revoked_at timestamptz null,
      created_at timestamptz not null default now()
    )`);
    this.addSql('create index api_key_owner_idx on api_key (owner_id, created_at desc)');
  }
}
