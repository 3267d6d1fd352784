import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';

export enum MediaStatus {
  /** An upload URL was handed out; the bytes have not arrived (yet). */
  pending = 'pending',
  ready = 'ready',
}

export enum MediaSource {
  upload = 'upload',
  ai = 'ai',
}

registerEnumType(MediaStatus, { name: 'MediaStatus' });
registerEnumType(MediaSource, { name: 'MediaSource' });

/** A media file of one user, stored under `storageKey`; GraphQL carries only its reference and URL. */
@Entity({ tableName: 'media_file' })
@ObjectType({ description: 'A media file (uploaded or generated) of the calling user' })
export class MediaFile {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true })
  brandId: string | null = null;

  @Property({ type: 'text' })
  @Field(() => String)
  filename!: string;

  @Property({ type: 'text' })
  @Field(() => String)
  contentType!: string;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Size in bytes (declared up front for uploads, and enforced)' })
  size!: number;

  @Property({ type: 'text' })
  storageKey!: string;

  @Property({ type: 'text' })
  @Field(() => MediaStatus)
  status: MediaStatus = MediaStatus.pending;

  @Property({ type: 'text' })
  @Field(() => MediaSource)
  source: MediaSource = MediaSource.upload;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'The prompt of a generated image' })
  prompt: string | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  uploadExpiresAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the bytes arrived' })
  readyAt: Date | null = null;
}
