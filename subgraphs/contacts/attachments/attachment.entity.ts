import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';

export enum AttachmentStatus {
  /** Reserved: the bytes are on their way to the staging key, unchecked. Never listed; swept once expired. */
  pending = 'pending',
  /** Checked and moved into `storageKey`. */
  committed = 'committed',
}

/**
 * A file of a contact. The bytes live in the storage layer under `storageKey`; only metadata is here.
 * A row is pending from the reservation of its upload until its commit (`lib/storage/uploads.ts`).
 */
@Entity({ tableName: 'attachment' })
@ObjectType({
  description: 'A file attached to a contact (metadata and storage reference; bytes travel outside GraphQL)',
})
export class Attachment {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the attachment' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The contact the file is attached to' })
  contactId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Name of the file as it was uploaded' })
  filename!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Media type of the file, e.g. application/pdf' })
  contentType!: string;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Bytes' })
  size = 0;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Where the storage layer keeps the bytes' })
  storageKey!: string;

  @Property({ type: 'text' })
  status: AttachmentStatus = AttachmentStatus.pending;

  /** Until when the upload may be sent; null once committed. */
  @Property({ type: 'timestamptz', nullable: true })
  uploadExpiresAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the file was attached' })
  createdAt: Date = new Date();
}

@ObjectType({ description: 'Permission to store one file for a contact, then record it with recordAttachment' })
export class AttachmentUploadSlot {
  @Field(() => String, { description: 'Signed; hand it to recordAttachment once the bytes are stored' })
  uploadToken!: string;

  @Field(() => String, {
    description:
      'Where to store the bytes: a staging key, from which recordAttachment moves them into place once checked',
  })
  storageKey!: string;

  @Field(() => Int, { description: 'Largest file accepted, in bytes' })
  maxBytes!: number;

  @Field(() => String, { description: 'Media type the stored file is recorded with' })
  contentType!: string;

  @Field(() => Date, { description: 'Until when the upload token may be recorded' })
  expiresAt!: Date;
}
