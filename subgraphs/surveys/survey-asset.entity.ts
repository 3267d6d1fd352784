import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';

export enum AssetStatus {
  /** Presigned: the bytes may be on their way but nobody has vouched for them. */
  pending = 'pending',
  /** Checked (size, type, checksum) and attached to its survey. */
  committed = 'committed',
}

registerEnumType(AssetStatus, { name: 'SurveyAssetStatus' });

/** A photo or PDF of a survey, uploaded in two steps: presign, then commit. */
@Entity({ tableName: 'survey_asset' })
@ObjectType({ description: 'A photo or document attached to a survey' })
export class SurveyAsset {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID)
  surveyId!: string;

  @Property({ type: 'text' })
  @Field(() => String)
  filename!: string;

  @Property({ type: 'text' })
  @Field(() => String)
  contentType!: string;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Size in bytes, as declared and then checked' })
  size!: number;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'SHA-256 (hex) of the stored bytes, known once committed' })
  sha256: string | null = null;

  @Property({ type: 'text' })
  storageKey!: string;

  @Property({ type: 'text' })
  @Field(() => AssetStatus)
  status: AssetStatus = AssetStatus.pending;

  @Property({ type: 'timestamptz' })
  uploadExpiresAt!: Date;

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  committedAt: Date | null = null;
}
