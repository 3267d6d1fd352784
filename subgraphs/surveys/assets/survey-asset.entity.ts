import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';

export enum AssetStatus {
  /** Presigned: the bytes may be on their way but nobody has vouched for them. */
  PENDING = 'pending',
  /** Checked (size, type, checksum) and attached to its survey. */
  COMMITTED = 'committed',
}

registerEnumType(AssetStatus, {
  name: 'SurveyAssetStatus',
  description: "Whether an asset's upload has been checked and attached",
  valuesConfig: {
    PENDING: { description: 'Presigned: the bytes may be on their way, unchecked' },
    COMMITTED: { description: 'Checked (size, type, checksum) and attached to its survey' },
  },
});

/** A photo or PDF of a survey, uploaded in two steps: presign, then commit. */
@Entity({ tableName: 'survey_asset' })
@ObjectType({ description: 'A photo or document attached to a survey' })
export class SurveyAsset {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the asset' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The survey the asset belongs to' })
  surveyId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Name of the file' })
  filename!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Media type of the file: an image type or application/pdf' })
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
  @Field(() => AssetStatus, { description: 'Whether the upload has been checked and attached' })
  status: AssetStatus = AssetStatus.PENDING;

  @Property({ type: 'timestamptz' })
  uploadExpiresAt!: Date;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the upload was presigned' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the asset was committed; null while pending' })
  committedAt: Date | null = null;
}
