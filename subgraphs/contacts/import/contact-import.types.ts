import { Field, ID, Int, ObjectType } from 'type-graphql';
import { ConnectionType } from '#lib/data/pagination.js';

@ObjectType({ description: 'Why one row of an import was skipped' })
export class ImportRowError {
  @Field(() => Int, { description: 'Position of the record in the file, the header being row 1' })
  row!: number;

  @Field(() => String, { nullable: true, description: 'The CSV column at fault; null when the whole row is' })
  column!: string | null;

  @Field(() => String, { description: 'What is wrong with the row or the value' })
  message!: string;
}

@ObjectType({ description: 'One batch of an import: written all together, or not at all' })
export class ImportBatch {
  @Field(() => Int, { description: 'Row number of the first record of the batch (the header is row 1)' })
  firstRow!: number;
  @Field(() => Int, { description: 'Row number of the last record of the batch' }) lastRow!: number;
  @Field(() => Int, { description: 'Contacts the batch created' }) created!: number;
  @Field(() => Int, { description: 'Existing contacts the batch updated (matched by e-mail address)' })
  updated!: number;
  @Field(() => Boolean, { description: 'False when the batch was rolled back (its rows are counted as skipped)' })
  written!: boolean;
}

@ObjectType({ description: 'What an import did' })
export class ImportResult {
  @Field(() => Int, { description: 'Data rows read' }) rows!: number;
  @Field(() => Int, { description: 'Contacts created' }) created!: number;
  @Field(() => Int, { description: 'Rows whose e-mail address matched a contact, which they updated' })
  updated!: number;
  @Field(() => Int, { description: 'Rows left out: invalid, or in a batch that was rolled back' }) skipped!: number;
  @Field(() => [ImportRowError], { description: 'Row errors, the first 1000' }) errors!: ImportRowError[];
  @Field(() => Boolean, { description: 'True when there were more row errors than listed' }) errorsTruncated!: boolean;
  @Field(() => [ImportBatch], { description: 'The batches the rows were written in, in file order' })
  batches!: ImportBatch[];
}

@ObjectType({ description: 'Permission to store one CSV file, then import it with importContacts' })
export class ImportUploadSlot {
  @Field(() => ID, { description: 'Hand it to importContacts once the bytes are stored' })
  uploadId!: string;

  @Field(() => String, { description: 'Where to store the bytes (a staging key)' })
  storageKey!: string;

  @Field(() => Int, { description: 'Largest file accepted, in bytes (IMPORT_MAX_BYTES)' })
  maxBytes!: number;

  @Field(() => Date, { description: 'Until when the file may be imported' })
  expiresAt!: Date;
}

export const ImportRowErrorConnection = ConnectionType(ImportRowError, 'ImportRowError');
