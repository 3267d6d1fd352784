import { Migration } from '#lib/data/database.js';

/** Platform integrations and their OAuth states, media files, and the publisher's job bookkeeping. */
export class Migration20261122200001SocialReach extends Migration {
  override name = 'Migration20261122200001SocialReach';

  override up(): void {
    this.addSql(`create table integration (
      id uuid primary key,
      owner_id text not null,
      platform text not null,
      status text not null check (status in ('connected', 'needs_reconnect')),
      account_id text not null,
      account_name text not null,
      account_url text null,
      access_token_sealed text not null,
      refresh_token_sealed text null,
      token_expires_at timestamptz null,
      scope text null,
      last_error text null,
      last_refreshed_at timestamptz null,
      connected_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (owner_id, platform)
    )`);
    // The refresh job looks for tokens about to expire across all users.
    this.addSql(`create index integration_refresh_due_idx on integration (token_expires_at)
      where status = 'connected' and refresh_token_sealed is not null`);

    this.addSql(`create table oauth_state (
      id uuid primary key,
      state_hash text not null unique,
      owner_id text not null,
      platform text not null,
      code_verifier_sealed text not null,
      redirect_uri text not null,
      expires_at timestamptz not null,
      used_at timestamptz null,
      created_at timestamptz not null default now()
    )`);
    this.addSql('create index oauth_state_expires_idx on oauth_state (expires_at)');

    this.addSql(`create table media_file (
      id uuid primary key,
      owner_id text not null,
      brand_id uuid null references brand (id) on delete set null,
      filename text not null,
      content_type text not null,
      size integer not null check (size > 0),
      storage_key text not null unique,
      status text not null check (status in ('pending', 'ready')),
      source text not null check (source in ('upload', 'ai')),
      prompt text null,
      upload_expires_at timestamptz null,
      created_at timestamptz not null default now(),
      ready_at timestamptz null
    )`);
    this.addSql(
      "create index media_file_owner_ready_idx on media_file (owner_id, created_at desc, id desc) where status = 'ready'",
    );
    this.addSql(
      "create index media_file_owner_pending_idx on media_file (owner_id, created_at desc) where status = 'pending'",
    );

    // At most once per platform: while one attempt is in flight or has succeeded, no second one
    // can be recorded, whichever worker tries.
    this.addSql(`create unique index publish_attempt_once_idx on publish_attempt (post_id, platform)
      where status in ('pending', 'succeeded')`);

    // The pending pg-boss job of each queued post, so a reschedule or delete can cancel it.
    this.addSql(`create table publish_job (
      post_id uuid primary key,
      job_id text not null,
      run_at timestamptz not null
    )`);
  }
}
