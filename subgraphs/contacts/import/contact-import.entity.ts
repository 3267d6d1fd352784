import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';

/** A CSV file on its way to an import: reserved, its bytes stored, then handed to an import job. */
@Entity({ tableName: 'import_upload' })
export class ImportUpload {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  storageKey!: string;

  @Property({ type: 'timestamptz' })
  uploadExpiresAt!: Date;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}

/** Where an import job stands; the stored values are the REST body's. */
export enum ContactImportStatus {
  QUEUED = 'queued',
  RUNNING = 'running',
  SUCCEEDED = 'succeeded',
  FAILED = 'failed',
  CANCELLED = 'cancelled',
}

/** The states an import ends in: nothing changes an import in one of them. */
export const FINISHED_IMPORT_STATES: readonly ContactImportStatus[] = [
  ContactImportStatus.SUCCEEDED,
  ContactImportStatus.FAILED,
  ContactImportStatus.CANCELLED,
];

registerEnumType(ContactImportStatus, {
  name: 'ContactImportStatus',
  description: 'Where a contact import stands',
  valuesConfig: {
    QUEUED: { description: 'Waiting for a worker' },
    RUNNING: { description: 'Being checked or written, batch by batch' },
    SUCCEEDED: { description: 'Every row was written or reported' },
    FAILED: { description: 'The file could not be imported (see `failure`); nothing was written' },
    CANCELLED: { description: 'Stopped on request; the batches written before stay' },
  },
});

/** Why an import failed, as the problem the import request would have answered. */
export interface ImportFailure {
  code: string;
  message: string;
  fields: { field: string; message: string }[];
}

/**
 * One import of a CSV file into the contacts, run in the background by a pg-boss job. The counts and
 * `nextRow` move together with each written batch (one transaction), which is what lets a restarted
 * job go on exactly where the last one stopped.
 */
@Entity({ tableName: 'contact_import' })
@ObjectType({ description: 'A CSV import of contacts, running in the background' })
export class ContactImport {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the import' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  @Field(() => ContactImportStatus, { description: 'Where the import stands' })
  status: ContactImportStatus = ContactImportStatus.QUEUED;

  @Property({ type: 'text', hidden: true })
  storageKey!: string;

  /** CSV column -> contact field (null: ignored); null: columns matched by header name. */
  @Property({ type: 'json', nullable: true, hidden: true })
  mapping: Record<string, string | null> | null = null;

  @Property({ type: 'boolean' })
  @Field(() => Boolean, { description: 'True when the import only checks the rows and writes nothing' })
  dryRun: boolean = false;

  @Property({ type: 'integer', nullable: true })
  @Field(() => Int, { nullable: true, description: 'Data rows in the file; null until the file has been read once' })
  rows: number | null = null;

  /** Row number (the header being row 1) the job goes on from. */
  @Property({ type: 'integer', hidden: true })
  nextRow: number = 2;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Data rows done so far (written, or skipped and reported)' })
  processed: number = 0;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Contacts created (on a dry run: that would be created)' })
  created: number = 0;

  @Property({ type: 'integer' })
  @Field(() => Int, {
    description: 'Contacts whose e-mail address matched, updated (on a dry run: that would be updated)',
  })
  updated: number = 0;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Rows left out: invalid, or in a batch that could not be written' })
  skipped: number = 0;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Row errors reported (listed by `errors`; a row may have several)' })
  errorCount: number = 0;

  @Property({ type: 'json', nullable: true, hidden: true })
  failure: ImportFailure | null = null;

  @Property({ type: 'text', nullable: true, hidden: true })
  createdBy: string | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the import was asked for' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When a worker first took it' })
  startedAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When it succeeded, failed or was cancelled' })
  finishedAt: Date | null = null;
}
