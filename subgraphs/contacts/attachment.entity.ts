import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';

/** A file of a contact. The bytes live in the storage layer under `storageKey`; only metadata is here. */
@Entity({ tableName: 'attachment' })
@ObjectType({ description: 'A file attached to a contact (metadata and storage reference; bytes travel outside GraphQL)' })
export class Attachment {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID)
  contactId!: string;

  @Property({ type: 'text' })
  @Field(() => String)
  filename!: string;

  @Property({ type: 'text' })
  @Field(() => String)
  contentType!: string;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Bytes' })
  size!: number;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Where the storage layer keeps the bytes' })
  storageKey!: string;

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  createdAt: Date = new Date();
}

@ObjectType({ description: 'Permission to store one file for a contact, then record it with recordAttachment' })
export class AttachmentUploadSlot {
  @Field(() => String, { description: 'Signed; hand it to recordAttachment once the bytes are stored' })
  uploadToken!: string;

  @Field(() => String, { description: 'Where to store the bytes' })
  storageKey!: string;

  @Field(() => Int, { description: 'Largest file accepted, in bytes' })
  maxBytes!: number;

  @Field(() => String)
  contentType!: string;

  @Field(() => Date)
  expiresAt!: Date;
}
