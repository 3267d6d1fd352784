import { Migration } from '#lib/data/database.js';

/** Notes, attachments, sales pipelines with their stages, stage placements and the move history. */
export class Migration20261122000002ContactWork extends Migration {
  override name = 'Migration20261122000002ContactWork';

  override up(): void {
    // Millisecond precision, as JavaScript dates have: the export pages by (created_at, id) keyset
    // cursors, which must compare equal to the value they were read from.
    this.addSql(
      'alter table contact alter column created_at type timestamptz(3), alter column updated_at type timestamptz(3)',
    );

    this.addSql(`create table note (
      id uuid primary key,
      contact_id uuid not null references contact (id) on delete cascade,
      body text not null,
      created_at timestamptz(3) not null default now(),
      updated_at timestamptz(3) not null default now()
    )`);
    this.addSql('create index note_contact_created_idx on note (contact_id, created_at desc, id desc)');

    this.addSql(`create table attachment (
      id uuid primary key,
      contact_id uuid not null references contact (id) on delete cascade,
      filename text not null,
      content_type text not null,
      size integer not null,
      storage_key text not null unique,
      created_at timestamptz(3) not null default now()
    )`);
    this.addSql('create index attachment_contact_created_idx on attachment (contact_id, created_at desc, id desc)');

    this.addSql(`create table pipeline (
      id uuid primary key,
      name text not null,
      is_default boolean not null default false,
      created_at timestamptz(3) not null default now()
    )`);
    this.addSql('create unique index pipeline_name_uq on pipeline (lower(name))');
    this.addSql('create unique index pipeline_one_default_uq on pipeline (is_default) where is_default');
    this.addSql(`create table stage (
      id uuid primary key,
      pipeline_id uuid not null references pipeline (id) on delete cascade,
      name text not null,
      position int not null,
      unique (pipeline_id, position)
    )`);

    // A contact sits in at most one stage; a live contact without a row here is in the first
    // stage of the default pipeline, so new and imported contacts need no placement write.
    this.addSql(`create table contact_stage (
      contact_id uuid primary key references contact (id) on delete cascade,
      pipeline_id uuid not null references pipeline (id),
      stage_id uuid not null references stage (id),
      moved_at timestamptz(3) not null
    )`);
    this.addSql('create index contact_stage_stage_idx on contact_stage (stage_id)');
    this.addSql(`create table stage_move (
      id uuid primary key,
      contact_id uuid not null references contact (id) on delete cascade,
      pipeline_id uuid not null references pipeline (id),
      from_stage_id uuid null references stage (id),
      to_stage_id uuid not null references stage (id),
      moved_at timestamptz(3) not null
    )`);
    this.addSql('create index stage_move_contact_idx on stage_move (contact_id, moved_at, id)');

    this.addSql(`with sales as (
        insert into pipeline (id, name, is_default) values (gen_random_uuid(), 'Sales', true) returning id
      )
      insert into stage (id, pipeline_id, name, position)
      select gen_random_uuid(), sales.id, stages.name, stages.position
      from sales, (values ('Lead', 1), ('Qualified', 2), ('Proposal', 3), ('Negotiation', 4), ('Won', 5), ('Lost', 6)) as stages (name, position)`);
  }
}
