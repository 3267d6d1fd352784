import { Migration } from '#lib/data/database.js';

export class Migration20261122100001Surveys extends Migration {
  override name = 'Migration20261122100001Surveys';

  override up(): void {
    this.addSql(`create table survey (
      id uuid primary key,
      owner_email text not null,
      venue_name text not null,
      address text null,
      contact_name text null,
      contact_phone text null,
      capacity integer null,
      amenities text[] not null default '{}',
      notes text null,
      contact_id uuid null,
      status text not null default 'draft' check (status in ('draft', 'submitted')),
      submitted_at timestamptz null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql('create index survey_created_idx on survey (created_at desc, id desc)');
    this.addSql('create index survey_owner_created_idx on survey (owner_email, created_at desc, id desc)');
    this.addSql('create index survey_contact_idx on survey (contact_id) where contact_id is not null');

    this.addSql(`create table survey_asset (
      id uuid primary key,
      survey_id uuid not null references survey (id) on delete cascade,
      filename text not null,
      content_type text not null,
      size integer not null check (size > 0),
      sha256 text null,
      storage_key text not null unique,
      status text not null default 'pending' check (status in ('pending', 'committed')),
      upload_expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      committed_at timestamptz null
    )`);
    this.addSql('create index survey_asset_survey_idx on survey_asset (survey_id, created_at)');

    // Deferred: the unit of work may insert a new survey's first event before the survey itself.
    this.addSql(`create table survey_event (
      id uuid primary key,
      survey_id uuid not null references survey (id) on delete cascade deferrable initially deferred,
      actor_email text not null,
      kind text not null,
      data jsonb not null default '{}',
      created_at timestamptz not null default now()
    )`);
    this.addSql('create index survey_event_survey_idx on survey_event (survey_id, created_at)');

    this.addSql(`create table magic_link (
      id uuid primary key,
      email text not null,
      token_hash text not null unique,
      expires_at timestamptz not null,
      used_at timestamptz null,
      voided_at timestamptz null,
      created_at timestamptz not null default now()
    )`);
    this.addSql('create index magic_link_open_idx on magic_link (email) where used_at is null and voided_at is null');

    this.addSql(`create table user_session (
      id uuid primary key,
      email text not null,
      token_hash text not null unique,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    )`);
    this.addSql('create index user_session_expires_idx on user_session (expires_at)');
  }
}
